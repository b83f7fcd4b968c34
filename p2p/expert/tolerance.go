package expert

import "math"

// Tolerance bounds how far a holder's output value may be from another
// run of the same expert on the same input and still be the same
// computation: |claimed − recomputed| ≤ Tolerance × (1 + |recomputed|).
// One expert is a SwiGLU FFN in float32: the same weights on another SIMD
// path (or another summation order) differ by rounding, which over a dot
// product of n terms is about √n × 2⁻²⁴ relative (≈ 1e-5 at n = 16384, the
// widest row the protocol takes), and the absolute term covers values
// near 0 where relative error means nothing. 1e-3 is two orders of
// magnitude above that, while a holder serving other weights (a quantised
// copy, a perturbation) or other rows misses it by far more on some value.
// A re-check keeps evidence, and a committee convicts, only beyond it: the
// two must agree, or a disputer would be sent to lose its bond.
const Tolerance = 1e-3

// Deviation returns the largest |claimed − want| / (1 + |want|) over
// every value of two equally shaped row sets and where it is (row-major);
// a value that is not finite in one and not bit-identical in the other
// counts as infinitely far, and so does a shape that differs.
func Deviation(claimed, want [][]float32) (float64, int) {
	if len(claimed) != len(want) {
		return math.Inf(1), 0
	}
	worst, at, k := 0.0, -1, 0
	for i := range want {
		if len(claimed[i]) != len(want[i]) {
			return math.Inf(1), k
		}
		for j, w := range want[i] {
			c := claimed[i][j]
			var d float64
			switch {
			case math.Float32bits(c) == math.Float32bits(w):
			case notFinite(c) || notFinite(w):
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

func notFinite(v float32) bool { return math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) }
