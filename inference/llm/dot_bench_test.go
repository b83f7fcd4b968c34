package llm

import (
	"math/rand/v2"
	"strconv"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"testing"
)

// BenchmarkKernel measures each kernel of each set on L1-resident rows of
// 768 (a 100M model's width): multiply-adds per second.
func BenchmarkKernel(b *testing.B) {
	const n = 768
	rng := rand.New(rand.NewPCG(1, 2))
	var w [4][]float32
	var h [4][]uint16
	var q [4][]int8
	var d [4][]float32
	var x [4][]float32
	for i := range w {
		w[i], h[i], x[i] = randF32(rng, n), randF16(rng, n), randF32(rng, n)
		q[i], d[i] = randQ8(rng, n/qk)
	}
	x3 := [3][]float32{x[0], x[1], x[2]}
	q2, d2 := [2][]int8{q[0], q[1]}, [2][]float32{d[0], d[1]}
	for _, k := range allKernels() {
		run := func(name string, macs int, fn func()) {
			b.Run(k.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					fn()
				}
				b.ReportMetric(float64(macs)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
		var o4 [4]float32
		var o8 [8]float32
		var o12 [12]float32
		run("f32Rows4", 4*n, func() { k.f32Rows4(&o4, &w, x[0]) })
		run("f32Tile4x3", 12*n, func() { k.f32Tile4x3(&o12, &w, &x3) })
		run("f16Rows4", 4*n, func() { k.f16Rows4(&o4, &h, x[0]) })
		run("q8Rows4", 4*n, func() { k.q8Rows4(&o4, &q, &d, x[0]) })
		run("q8Tile2x4", 8*n, func() { k.q8Tile2x4(&o8, &q2, &d2, &x) })
	}
}

// BenchmarkMatmulStream measures decode-shaped products (one token) over
// 32 MB of weights, more than the caches hold, on one thread.
func BenchmarkMatmulStream(b *testing.B) {
	const rows, cols = 2048, 768
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ty := range []gguf.Type{gguf.TypeF32, gguf.TypeQ8_0} {
		rb, _ := ty.RowBytes(cols)
		nm := (32 << 20) / (rows * rb)
		var ms []*Matrix
		for range nm {
			raw, _ := gguf.EncodeRow(nil, ty, randF32(rng, rows*cols))
			m, err := NewMatrix(ty, rows, cols, raw)
			if err != nil {
				b.Fatal(err)
			}
			ms = append(ms, m)
		}
		x := randF32(rng, cols)
		out := make([]float32, rows)
		for _, threads := range []int{1, 2} {
			b.Run(ty.String()+"/threads-"+strconv.Itoa(threads), func(b *testing.B) {
				i := 0
				for b.Loop() {
					matmul(threads, out, ms[i%len(ms)], x, 1)
					i++
				}
				b.ReportMetric(float64(rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}
