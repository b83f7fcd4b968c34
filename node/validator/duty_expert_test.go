package validator

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestJudgeBatchTolerance: the batch judge re-runs the expert on the real
// weights and acquits output equal to it or within rounding (1e-6
// relative, what another SIMD path gives), convicts a single value off
// by more than ExpertTolerance, a NaN, and rows of a width no holder of
// the model computes, and finds evidence whose rows are not the ones the
// receipt signs innocent.
func TestJudgeBatchTolerance(t *testing.T) {
	o := modelgen.DevnetOptions()
	o.MoE, o.Layers, o.Dim, o.Heads, o.FFN, o.Vocab = true, 2, 64, 4, 128, 320
	bt := newExpertBatch(t, o, 2, 0, 3)
	eng, rows, want := bt.eng, bt.rows, bt.out
	// evidence is the batch with output out, signed as the holder's.
	evidence := func(rows []byte, out [][]float32, dim int) ledger.DisputeEvidence {
		return bt.evidence(t, rows, out, dim)
	}
	shifted := func(f func(x float32) float32) [][]float32 {
		out := make([][]float32, len(want))
		for i := range want {
			out[i] = append([]float32(nil), want[i]...)
		}
		out[1][5] = f(out[1][5])
		return out
	}
	for name, tc := range map[string]struct {
		ev   ledger.DisputeEvidence
		want ledger.Verdict
	}{
		"exact":    {evidence(rows, want, o.Dim), ledger.VerdictInnocent},
		"rounding": {evidence(rows, shifted(func(x float32) float32 { return x * (1 + 1e-6) }), o.Dim), ledger.VerdictInnocent},
		"off": {evidence(rows, shifted(func(x float32) float32 { return x + 2*ExpertTolerance*(1+float32(math.Abs(float64(x)))) }), o.Dim),
			ledger.VerdictGuilty},
		"nan":       {evidence(rows, shifted(func(float32) float32 { return float32(math.NaN()) }), o.Dim), ledger.VerdictGuilty},
		"wrong dim": {evidence(rows[:len(rows)/2], [][]float32{make([]float32, o.Dim/2), make([]float32, o.Dim/2)}, o.Dim/2), ledger.VerdictGuilty},
	} {
		v, why, err := judgeBatch(t.Context(), eng, tc.ev)
		if err != nil || v != tc.want {
			t.Errorf("%s: %v (%s), %v; want %v", name, v, why, err, tc.want)
		}
	}
	ev := evidence(rows, want, o.Dim)
	ev.Output = append([]byte(nil), ev.Output...)
	ev.Output[0] ^= 1
	if v, _, err := judgeBatch(t.Context(), eng, ev); v != ledger.VerdictInnocent || !errors.Is(err, errUnverifiable) {
		t.Errorf("output not the receipt's: %v, %v", v, err)
	}
	if _, why, _ := judgeBatch(t.Context(), eng, evidence(rows, want, o.Dim)); !strings.Contains(why, "tolerance") {
		t.Errorf("verdict reason %q does not say the tolerance", why)
	}
}

// BenchmarkBatchJudge measures a committee member's cost per disputed
// batch (the devnet MoE shape, 8 rows: about a prefill chunk's share of
// one expert) against the holder's own work for it, one ExpertForward.
func BenchmarkBatchJudge(b *testing.B) {
	o := modelgen.DevnetOptions()
	o.MoE = true
	bt := newExpertBatch(b, o, 8, 1, 2)
	eng, m := bt.eng, bt.eng.Model()
	ev := bt.evidence(b, bt.rows, bt.out, o.Dim)
	b.Run("holder", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.ExpertForward(1, 2, bt.in, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("judge", func(b *testing.B) {
		for b.Loop() {
			if v, _, err := judgeBatch(b.Context(), eng, ev); err != nil || v != ledger.VerdictInnocent {
				b.Fatal(v, err)
			}
		}
	})
}

// expertBatch is a holder's batch for one expert of a generated MoE
// model: its input (packed as rows) and the output the holder's engine
// computes, and the holder's machine that signs it.
type expertBatch struct {
	eng      *llm.Engine
	mach     *ledgertest.Machine
	layer, e int
	in, out  [][]float32
	rows     []byte
}

// newExpertBatch generates model o and computes a batch of n rows for
// expert e at layer.
func newExpertBatch(tb testing.TB, o modelgen.GenOptions, n, layer, e int) expertBatch {
	tb.Helper()
	dir := tb.TempDir()
	bt := expertBatch{eng: openGenerated(tb, filepath.Join(dir, "m"), o), mach: testMachine(tb, filepath.Join(dir, "machine")),
		layer: layer, e: e, in: expertInput(n, o.Dim)}
	var err error
	if bt.out, err = bt.eng.Model().ExpertForward(layer, e, bt.in, 1); err != nil {
		tb.Fatal(err)
	}
	bt.rows, _ = expert.PackRows(bt.in, o.Dim)
	return bt
}

// evidence is dispute evidence of the batch with input rows (packed) at
// positions 0.. and output out of dim columns, in a receipt the holder
// signed.
func (bt expertBatch) evidence(tb testing.TB, rows []byte, out [][]float32, dim int) ledger.DisputeEvidence {
	tb.Helper()
	packed, _ := expert.PackRows(out, dim)
	positions := make([]uint32, len(out))
	for i := range positions {
		positions[i] = uint32(i)
	}
	req := &expert.Request{Layer: uint32(bt.layer), Dim: uint32(dim), Batches: []expert.WireBatch{{Expert: uint32(bt.e), Positions: positions, Rows: rows}}}
	env, err := expert.Sign(bt.mach.Session, expert.NewReceipt(bt.mach.Session, req, [][]byte{packed}, time.Now()), false)
	if err != nil {
		tb.Fatal(err)
	}
	return ledger.DisputeEvidence{Receipt: env, ReceiptHashes: []terms.Hash32{{1}}, Rows: rows, Output: packed}
}

// expertInput is n rows of dim activations in [-1, 1], distinct per row:
// an expert's input for the batch judge.
func expertInput(n, dim int) [][]float32 {
	in := make([][]float32, n)
	for r := range in {
		in[r] = make([]float32, dim)
		for k := range in[r] {
			in[r][k] = float32((r*31+k)%13)/6 - 1
		}
	}
	return in
}
