package llm

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestKernelExpBitIdentical: the vector expDet gives the scalar one's bits
// over the whole range, special cases and every tail length included.
func TestKernelExpBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	special := []float64{0, math.Copysign(0, -1), 1e-9, -1e-9, 1.0 / (1 << 28), 689.9, 690, 690.1, -690, -700, 709, 710, -745, -746,
		math.Inf(1), math.Inf(-1), math.NaN(), 0.5, -0.5, 0.34657359027997264, -0.34657359027997264}
	for _, k := range allKernels() {
		for _, n := range []int{1, 3, 4, 5, 63, 64, 65, 200} {
			x := make([]float64, n)
			for i := range x {
				switch rng.IntN(4) {
				case 0:
					x[i] = special[rng.IntN(len(special))]
				case 1:
					x[i] = (rng.Float64()*2 - 1) * 800
				default:
					x[i] = -rng.ExpFloat64() * 10
				}
			}
			got := append([]float64(nil), x...)
			k.exp(got)
			for i, v := range x {
				want := expDet(v)
				if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(got[i])) {
					t.Fatalf("%s exp(%v) = %v (%#x), expDet %v (%#x)", k.name, v, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
				}
			}
		}
	}
}

// TestKernelAxpyBitIdentical: the vector axpy adds the same rounded
// products as the scalar one, tails included.
func TestKernelAxpyBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, k := range allKernels() {
		for _, n := range []int{1, 7, 8, 9, 32, 61, 128} {
			y, x := randF32(rng, n), randF32(rng, n+2)
			a := float32(rng.NormFloat64())
			want := append([]float32(nil), y...)
			axpy(want, a, x)
			k.axpy(y, a, x)
			if !equalBits(y, want) {
				t.Fatalf("%s axpy n=%d differs", k.name, n)
			}
		}
	}
}

// TestKernelAttentionBitIdentical: whole-row scores and weighted sums equal
// dot per position and axpy per position, for head sizes with and without
// vector kernels and position counts with every remainder.
func TestKernelAttentionBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 2))
	for _, k := range allKernels() {
		for _, hd := range []int{4, 8, 32, 40, 64, 128} {
			for _, np := range []int{0, 1, 3, 4, 5, 9, 33} {
				stride := hd*2 + 8
				q, kc, vc := randF32(rng, hd), randF32(rng, np*stride+hd), randF32(rng, np*stride+hd)
				w := randF32(rng, np)
				got := make([]float32, np)
				k.scores(got, q, kc, stride)
				for p := range got {
					sameBits(t, k.name+" scores hd="+strconv.Itoa(hd), got[p], dot(q, kc[p*stride:p*stride+hd]))
				}
				o, want := randF32(rng, hd), make([]float32, hd)
				for p, wt := range w {
					axpy(want, wt, vc[p*stride:p*stride+hd])
				}
				k.wsum(o, w, vc, stride)
				if !equalBits(o, want) {
					t.Fatalf("%s wsum hd=%d np=%d differs", k.name, hd, np)
				}
			}
		}
	}
}
