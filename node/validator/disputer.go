package validator

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// FirstFailingChunk is the disputer's search, off chain: it judges every
// commitment chunk of an optimistic answer's evidence on eng, the
// disputer's own copy of the real weights, exactly as a committee member
// judges the chunk a dispute names, and returns the first chunk found
// guilty with why, or -1 (and the last chunk's report) when every chunk
// verifies. A dispute must name that chunk: the committee judges the
// named chunk alone, so naming one that verifies loses the bond, and the
// bond grows with the chunk, so the first failing one is also the
// cheapest to name.
//
// Evidence that is not what the provider signed, or that this engine
// cannot re-execute, is an error rather than a chunk: the chain would
// refuse it or the committee would not convict on it. So is an engine
// holding other weights than the model the receipt names, since every
// chunk would fail on it while the committee's copy acquits.
func FirstFailingChunk(ctx context.Context, eng inference.Engine, ev ledger.DisputeEvidence) (chunk int, why string, err error) {
	if isBatch(ev) {
		return -1, "", errors.New("validator: an expert batch's evidence names no chunk")
	}
	_, r, err := receipt.Parse(ev.Receipt)
	if err != nil {
		return -1, "", fmt.Errorf("validator: %w: receipt: %w", errUnverifiable, err)
	}
	if id := eng.Info().ID; !bytes.Equal(id[:], r.ModelID) {
		return -1, "", fmt.Errorf("validator: the weights given are model %s, the receipt names model %x", id, r.ModelID)
	}
	proofs, err := commit.Decode(ev.Proofs)
	if err != nil {
		return -1, "", fmt.Errorf("validator: %w: proofs: %w", errUnverifiable, err)
	}
	// One judgement per chunk, each a prefill up to its end: quadratic in
	// the answer's length, but it is the committee's own judge, so the
	// chunk found is one the committee convicts on the same weights.
	for c := range proofs {
		ev.Chunk = uint32(c)
		v, w, err := judge(ctx, eng, ev, commit.DefaultTolerance)
		if err != nil {
			return -1, "", fmt.Errorf("validator: chunk %d: %w", c, err)
		}
		if v == ledger.VerdictGuilty {
			return c, w, nil
		}
		why = w
	}
	return -1, why, nil
}
