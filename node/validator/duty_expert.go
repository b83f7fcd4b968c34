package validator

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"runtime"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/p2p/expert"
)

// ExpertTolerance bounds how far a holder's output value may be from this
// member's re-execution of the same expert on the same input and still be
// the same computation: |claimed − recomputed| ≤ ExpertTolerance × (1 +
// |recomputed|). One expert is a SwiGLU FFN in float32: the same weights
// on another SIMD path (or another summation order) differ by rounding,
// which over a dot product of n terms is about √n × 2⁻²⁴ relative (≈ 1e-5
// at n = 16384, the widest row the protocol takes), and the absolute term
// covers values near 0 where relative error means nothing. 1e-3 is two
// orders of magnitude above that, while a holder serving other weights (a
// quantised copy, a perturbation) or other rows misses it by far more on
// some value: a single changed weight moves whole output rows.
const ExpertTolerance = 1e-3

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
	worst, at := compareRows(claimed, want)
	why := fmt.Sprintf("layer %d expert %d, %d rows: worst |Δ|/(1+|x|) %.3g at value %d (tolerance %g)", r.Layer, ent.Expert, len(in), worst, at, ExpertTolerance)
	if worst > ExpertTolerance {
		return ledger.VerdictGuilty, why, nil
	}
	return ledger.VerdictInnocent, why, nil
}

// compareRows returns the largest |claimed − want| / (1 + |want|) over
// every value and where it is (row-major); a value that is not finite in
// one and not bit-identical in the other counts as infinitely far.
func compareRows(claimed, want [][]float32) (float64, int) {
	worst, at, k := 0.0, -1, 0
	for i := range want {
		for j, w := range want[i] {
			c := claimed[i][j]
			var d float64
			switch {
			case math.Float32bits(c) == math.Float32bits(w):
			case isInfOrNaN(c) || isInfOrNaN(w):
				d = math.Inf(1)
			default:
				d = math.Abs(float64(c)-float64(w)) / (1 + math.Abs(float64(w)))
			}
			if d > worst || at < 0 {
				worst, at = d, k
			}
			k++
		}
	}
	return worst, at
}

func isInfOrNaN(v float32) bool { return math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) }
