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
	dir := t.TempDir()
	o := modelgen.DevnetOptions()
	o.MoE, o.Layers, o.Dim, o.Heads, o.FFN, o.Vocab = true, 2, 64, 4, 128, 320
	eng := openGenerated(t, filepath.Join(dir, "m"), o)
	m := eng.Model()
	mach := testMachine(t, filepath.Join(dir, "machine"))
	in := expertInput(2, o.Dim)
	want, err := m.ExpertForward(0, 3, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := expert.PackRows(in, o.Dim)
	// evidence is the batch with output out, signed as the holder's.
	evidence := func(rows []byte, out [][]float32, dim int) ledger.DisputeEvidence {
		return batchEvidence(t, mach, 0, 3, rows, out, dim)
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
	dir := b.TempDir()
	o := modelgen.DevnetOptions()
	o.MoE = true
	eng := openGenerated(b, filepath.Join(dir, "m"), o)
	m := eng.Model()
	mach := testMachine(b, filepath.Join(dir, "machine"))
	in := expertInput(8, o.Dim)
	out, err := m.ExpertForward(1, 2, in, 1)
	if err != nil {
		b.Fatal(err)
	}
	rows, _ := expert.PackRows(in, o.Dim)
	ev := batchEvidence(b, mach, 1, 2, rows, out, o.Dim)
	b.Run("holder", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.ExpertForward(1, 2, in, 1); err != nil {
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

// batchEvidence is dispute evidence of one batch of expert e at layer:
// input rows (packed) at positions 0.., output out of dim columns, in a
// receipt mach signed.
func batchEvidence(tb testing.TB, mach *ledgertest.Machine, layer, e int, rows []byte, out [][]float32, dim int) ledger.DisputeEvidence {
	tb.Helper()
	packed, _ := expert.PackRows(out, dim)
	positions := make([]uint32, len(out))
	for i := range positions {
		positions[i] = uint32(i)
	}
	req := &expert.Request{Layer: uint32(layer), Dim: uint32(dim), Batches: []expert.WireBatch{{Expert: uint32(e), Positions: positions, Rows: rows}}}
	env, err := expert.Sign(mach.Session, expert.NewReceipt(mach.Session, req, [][]byte{packed}, time.Now()))
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
