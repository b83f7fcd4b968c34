package llm

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// allKernels is every kernel set this machine runs, the reference last.
func allKernels() []kernelSet { return append(append([]kernelSet(nil), vectorKernels...), pureGo) }

// randF32 draws values over a wide range of magnitudes (so that rounding
// differences in any product or sum would show), with some zeros.
func randF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch rng.IntN(16) {
		case 0:
			v[i] = 0
		case 1:
			v[i] = float32(math.Copysign(0, -1))
		default:
			v[i] = float32(math.Ldexp(rng.NormFloat64(), rng.IntN(24)-12))
		}
	}
	return v
}

// randF16 draws finite halves (any sign, exponent, subnormals).
func randF16(rng *rand.Rand, n int) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		for {
			h := uint16(rng.Uint32())
			if h&0x7c00 != 0x7c00 {
				v[i] = h
				break
			}
		}
	}
	return v
}

// randQ8 draws quants over the whole int8 range and block scales.
func randQ8(rng *rand.Rand, nb int) ([]int8, []float32) {
	q := make([]int8, nb*qk)
	for i := range q {
		q[i] = int8(rng.Uint32())
	}
	d := make([]float32, nb)
	for i := range d {
		d[i] = gguf.F16ToF32(gguf.F32ToF16(float32(math.Ldexp(rng.Float64(), -rng.IntN(10)))))
	}
	return q, d
}

func sameBits(t *testing.T, what string, got, want float32) {
	t.Helper()
	if math.Float32bits(got) != math.Float32bits(want) {
		t.Fatalf("%s: %v (%#08x), reference %v (%#08x)", what, got, math.Float32bits(got), want, math.Float32bits(want))
	}
}

func TestKernelsBitIdenticalToGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	lengths := []int{1, 3, 7, 8, 13, 16, 24, 33, 40, 64, 136, 768}
	for _, k := range allKernels() {
		for _, n := range lengths {
			for range 4 {
				var w [4][]float32
				var h [4][]uint16
				var x [3][]float32
				for i := range w {
					w[i], h[i] = randF32(rng, n+rng.IntN(3)), randF16(rng, n)
				}
				for i := range x {
					x[i] = randF32(rng, n)
				}
				var o4 [4]float32
				k.f32Rows4(&o4, &w, x[0])
				for i := range o4 {
					sameBits(t, k.name+" f32Rows4 n="+strconv.Itoa(n), o4[i], dot(w[i][:n], x[0]))
				}
				var o12 [12]float32
				k.f32Tile4x3(&o12, &w, &x)
				for tk := range x {
					for r := range w {
						sameBits(t, k.name+" f32Tile4x3 n="+strconv.Itoa(n), o12[4*tk+r], dot(w[r][:n], x[tk]))
					}
				}
				k.f16Rows4(&o4, &h, x[1])
				dec := make([]float32, n)
				for i := range o4 {
					for j, v := range h[i] {
						dec[j] = gguf.F16ToF32(v)
					}
					sameBits(t, k.name+" f16Rows4 n="+strconv.Itoa(n), o4[i], dot(dec, x[1]))
				}
			}
		}
		for _, nb := range []int{1, 2, 3, 5, 24, 64} {
			var q [4][]int8
			var d [4][]float32
			var x [4][]float32
			for i := range q {
				q[i], d[i] = randQ8(rng, nb)
				x[i] = randF32(rng, nb*qk)
			}
			var o4 [4]float32
			k.q8Rows4(&o4, &q, &d, x[0])
			for i := range o4 {
				sameBits(t, k.name+" q8Rows4 nb="+strconv.Itoa(nb), o4[i], dotQ8(q[i], d[i], x[0]))
			}
			var o8 [8]float32
			q2, d2 := [2][]int8{q[0], q[1]}, [2][]float32{d[0], d[1]}
			k.q8Tile2x4(&o8, &q2, &d2, &x)
			for r := range q2 {
				for tk := range x {
					sameBits(t, k.name+" q8Tile2x4 nb="+strconv.Itoa(nb), o8[4*r+tk], dotQ8(q[r], d[r], x[tk]))
				}
			}
		}
	}
}

// TestKernelMatmulShapes runs matmul over edge shapes (rows and tokens not
// multiples of the tile, lengths the vector kernels do not take, products
// large enough to use several threads) with every kernel set and checks
// each output against the reference dot product of its row.
func TestKernelMatmulShapes(t *testing.T) {
	defer func(k kernelSet) { kern = k }(kern)
	rng := rand.New(rand.NewPCG(5, 9))
	type shape struct{ rows, cols, batch int }
	var shapes []shape
	for _, rows := range []int{1, 2, 3, 5, 9} {
		for _, batch := range []int{1, 2, 3, 4, 5, 7} {
			shapes = append(shapes, shape{rows, 64, batch}, shape{rows, 32, batch})
		}
	}
	shapes = append(shapes, shape{3, 12, 4}, shape{5, 20, 1}, shape{67, 256, 5}, shape{131, 512, 1})
	for _, sh := range shapes {
		for _, ty := range []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeQ4_K} {
			if ty == gguf.TypeQ8_0 && sh.cols%qk != 0 || ty == gguf.TypeQ4_K && sh.cols%gguf.KBlockSize != 0 {
				continue
			}
			vals := randF32(rng, sh.rows*sh.cols)
			for i := range vals {
				vals[i] = float32(math.Max(-60000, math.Min(60000, float64(vals[i]))))
			}
			raw, err := gguf.EncodeRow(nil, ty, vals)
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewMatrix(ty, sh.rows, sh.cols, raw)
			if err != nil {
				t.Fatal(err)
			}
			x := randF32(rng, sh.batch*sh.cols)
			want := make([]float32, sh.batch*sh.rows)
			buf := make([]float32, sh.cols)
			for b := 0; b < sh.batch; b++ {
				for r := 0; r < sh.rows; r++ {
					xb := x[b*sh.cols : (b+1)*sh.cols]
					switch ty {
					case gguf.TypeQ8_0:
						q, d := m.q8Row(r)
						want[b*sh.rows+r] = dotQ8(q, d, xb)
					case gguf.TypeQ4_K:
						q, d := m.q8Row(r)
						want[b*sh.rows+r] = dotQ4K(q, d, m.q4Mins(r), xb)
					default:
						want[b*sh.rows+r] = dot(m.Row(r, buf), xb)
					}
				}
			}
			for _, k := range allKernels() {
				kern = k
				for _, threads := range []int{1, 2, 3} {
					got := make([]float32, len(want))
					matmul(threads, got, m, x, sh.batch)
					for i := range got {
						sameBits(t, k.name+" "+ty.String()+" matmul "+strconv.Itoa(sh.rows)+"x"+strconv.Itoa(sh.cols)+" batch "+strconv.Itoa(sh.batch)+" threads "+strconv.Itoa(threads), got[i], want[i])
					}
				}
			}
		}
	}
}

// TestKernelQ8MatchesDequantised: the Q8_0 product (and the Q4_K one, a
// Q8_0 product less its mins' term) is the dot product of the dequantised
// row, up to float32 rounding, and Matrix.Row decodes as gguf does.
func TestKernelQ8MatchesDequantised(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for _, tc := range []struct {
		ty   gguf.Type
		cols int
		tol  float64
		dot  func(m *Matrix, x []float32) float32
	}{
		{gguf.TypeQ8_0, 96, 1e-4, func(m *Matrix, x []float32) float32 { q, d := m.q8Row(0); return dotQ8(q, d, x) }},
		{gguf.TypeQ4_K, 2 * gguf.KBlockSize, 1e-3, func(m *Matrix, x []float32) float32 {
			q, d := m.q8Row(0)
			return dotQ4K(q, d, m.q4Mins(0), x)
		}},
	} {
		cols := tc.cols
		row, x := make([]float32, cols), make([]float32, cols)
		for i := range row {
			row[i], x[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		raw, err := gguf.EncodeRow(nil, tc.ty, row)
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMatrix(tc.ty, 1, cols, raw)
		if err != nil {
			t.Fatal(err)
		}
		deq := make([]float32, cols)
		if err := gguf.DecodeRow(deq, tc.ty, raw); err != nil {
			t.Fatal(err)
		}
		var want float64
		for i := range deq {
			want += float64(deq[i]) * float64(x[i])
		}
		if got := tc.dot(m, x); math.Abs(float64(got)-want) > tc.tol {
			t.Fatalf("%v dot %v, dequantised dot %v", tc.ty, got, want)
		}
		if got := m.Row(0, make([]float32, cols)); !equalBits(got, deq) {
			t.Fatalf("%v: Matrix.Row differs from gguf.DecodeRow", tc.ty)
		}
	}
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// FuzzKernelsMatchGo: on arbitrary inputs (NaNs aside: their payloads may
// differ) every kernel set gives the reference's bits.
func FuzzKernelsMatchGo(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 8 &^ 7
		if n == 0 {
			return
		}
		var w [4][]float32
		var h [4][]uint16
		var x [3][]float32
		for i := range w {
			w[i], h[i] = make([]float32, n), make([]uint16, n)
		}
		for i := range x {
			x[i] = make([]float32, n)
		}
		for j := 0; j < n; j++ {
			b := data[8*j : 8*j+8]
			for i := range w {
				w[i][j] = float32(int8(b[i])) * float32(math.Ldexp(1, int(b[7]%16)-8))
				h[i][j] = binary.LittleEndian.Uint16(b[2*(i%3):]) &^ 0x4000 // exponent below the NaN range
			}
			for i := range x {
				x[i][j] = float32(int8(b[4+i])) / 7
			}
		}
		for _, k := range allKernels() {
			var o4 [4]float32
			var o12 [12]float32
			k.f32Rows4(&o4, &w, x[0])
			for i := range o4 {
				sameBits(t, k.name+" f32Rows4", o4[i], dot(w[i], x[0]))
			}
			k.f32Tile4x3(&o12, &w, &x)
			for tk := range x {
				for r := range w {
					sameBits(t, k.name+" f32Tile4x3", o12[4*tk+r], dot(w[r], x[tk]))
				}
			}
			k.f16Rows4(&o4, &h, x[2])
			for i := range o4 {
				sameBits(t, k.name+" f16Rows4", o4[i], dotF16(h[i], x[2]))
			}
		}
	})
}
