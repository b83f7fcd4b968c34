package validator

import (
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/p2p/expert"
)

// ExpertTolerance is the expert protocol's tolerance (expert.Tolerance):
// the re-check that keeps evidence and this committee judge alike.
const ExpertTolerance = expert.Tolerance

// isBatch reports whether evidence is an expert batch's (the chain keeps
// receipt hashes only in those).
func isBatch(ev ledger.DisputeEvidence) bool { return len(ev.ReceiptHashes) > 0 }

// modelOf returns the llm model behind eng, nil when eng is another kind
// of engine (this member then cannot run a single expert and abstains).
func modelOf(eng inference.Engine) *llm.Model {
	if m, ok := eng.(interface{ Model() *llm.Model }); ok {
		return m.Model()
	}
	return nil
}

// judgeBatch re-runs the disputed expert batch on eng's real weights and
// compares with the output the holder signed: guilty beyond
// ExpertTolerance (or for a signed shape no holder of the real model could
// have computed), innocent within it. The chain checked the holder's
// signature and these hashes before opening the dispute; evidence whose
// rows do not hash to the receipt anyway proves nothing (innocent).
func judgeBatch(ctx context.Context, eng inference.Engine, ev ledger.DisputeEvidence) (ledger.Verdict, string, error) {
	m := modelOf(eng)
	if m == nil {
		return ledger.VerdictAbstain, "", fmt.Errorf("%w: the engine cannot run one expert", errCannotTell)
	}
	_, r, err := ledger.ParseExpertReceipt(ev.Receipt)
	if err != nil {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: %w", errUnverifiable, err)
	}
	if int(ev.Entry) >= len(r.Entries) {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: entry %d of %d", errUnverifiable, ev.Entry, len(r.Entries))
	}
	ent := r.Entries[ev.Entry]
	if sha256.Sum256(ev.Rows) != ent.InputHash || sha256.Sum256(ev.Output) != ent.OutputHash {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: the rows are not the ones the receipt signs", errUnverifiable)
	}
	dim := m.Cfg.Dim
	if len(ev.Rows) != len(ent.Positions)*dim*4 || len(ev.Output) != len(ev.Rows) {
		return ledger.VerdictGuilty, fmt.Sprintf("signed %d input and %d output bytes for %d rows of the model's %d values",
			len(ev.Rows), len(ev.Output), len(ent.Positions), dim), nil
	}
	in, err := expert.UnpackRows(ev.Rows, dim)
	if err != nil {
		return ledger.VerdictNone, "", fmt.Errorf("validator: batch rows: %w", err)
	}
	claimed, err := expert.UnpackRows(ev.Output, dim)
	if err != nil {
		return ledger.VerdictNone, "", fmt.Errorf("validator: batch output: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return ledger.VerdictNone, "", err
	}
	want, err := m.ExpertForward(int(r.Layer), int(ent.Expert), in, runtime.GOMAXPROCS(0))
	if err != nil {
		// The model has no such layer or expert: no holder of it signs one.
		return ledger.VerdictGuilty, fmt.Sprintf("signed layer %d expert %d, which the model lacks: %v", r.Layer, ent.Expert, err), nil
	}
	worst, at := expert.Deviation(claimed, want)
	why := fmt.Sprintf("layer %d expert %d, %d rows: worst |Δ|/(1+|x|) %.3g at value %d (tolerance %g)", r.Layer, ent.Expert, len(in), worst, at, ExpertTolerance)
	if worst > ExpertTolerance {
		return ledger.VerdictGuilty, why, nil
	}
	return ledger.VerdictInnocent, why, nil
}
