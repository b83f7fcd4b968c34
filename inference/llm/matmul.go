package llm

import "github.com/tenzrod/tenzrod/inference/gguf"

// serialWork is the number of multiply-adds below which a product runs on
// the calling goroutine: waking helpers costs more than it saves.
const serialWork = 1 << 16

// chunkWork is the least work (multiply-adds) of one parallel chunk.
const chunkWork = 1 << 15

// matmul computes out[b*m.Rows+r] = row r of m · x[b*m.Cols:] for b in
// [0, batch). Each output is one dot product in a fixed order (dot, dotF16
// or dotQ8), whatever the thread count, batch size or kernel set: the
// kernels compute tiles of rows x tokens, padding a short last tile with
// copies of its last row or token and discarding their outputs.
func matmul(threads int, out []float32, m *Matrix, x []float32, batch int) {
	rows, cols := m.Rows, m.Cols
	_ = out[batch*rows-1]
	_ = x[batch*cols-1]
	if rows*cols*batch < serialWork {
		threads = 1
	}
	xs := func(b int) []float32 { return x[b*cols : (b+1)*cols : (b+1)*cols] }
	switch {
	case m.Type == gguf.TypeQ8_0 && batch == 1:
		forRowGroups(threads, rows, 4, cols*batch, func(r0, nr int) {
			var q [4][]int8
			var d [4][]float32
			var o [4]float32
			for i := range q {
				q[i], d[i] = m.q8Row(r0 + min(i, nr-1))
			}
			kern.q8Rows4(&o, &q, &d, x[:cols])
			copy(out[r0:r0+nr], o[:nr])
		})
	case m.Type == gguf.TypeQ8_0:
		forRowGroups(threads, rows, 2, cols*batch, func(r0, nr int) {
			var q [2][]int8
			var d [2][]float32
			var o [8]float32
			var xt [4][]float32
			for i := range q {
				q[i], d[i] = m.q8Row(r0 + min(i, nr-1))
			}
			for b := 0; b < batch; b += 4 {
				nt := min(4, batch-b)
				for t := range xt {
					xt[t] = xs(b + min(t, nt-1))
				}
				kern.q8Tile2x4(&o, &q, &d, &xt)
				for i := 0; i < nr; i++ {
					for t := 0; t < nt; t++ {
						out[(b+t)*rows+r0+i] = o[4*i+t]
					}
				}
			}
		})
	case cols%8 != 0:
		// Lengths the vector kernels do not take: the reference per output.
		forRowGroups(threads, rows, 1, cols*batch, func(r, _ int) {
			var buf []float32
			if m.Type != gguf.TypeF32 {
				buf = make([]float32, cols)
			}
			row := m.Row(r, buf)
			for b := 0; b < batch; b++ {
				out[b*rows+r] = dot(row, xs(b))
			}
		})
	case m.Type == gguf.TypeF16:
		forRowGroups(threads, rows, 4, cols*batch, func(r0, nr int) {
			var w [4][]uint16
			var o [4]float32
			for i := range w {
				w[i] = m.f16Row(r0 + min(i, nr-1))
			}
			for b := 0; b < batch; b++ {
				kern.f16Rows4(&o, &w, xs(b))
				for i := 0; i < nr; i++ {
					out[b*rows+r0+i] = o[i]
				}
			}
		})
	default:
		forRowGroups(threads, rows, 4, cols*batch, func(r0, nr int) {
			var w [4][]float32
			var o4 [4]float32
			var o12 [12]float32
			var xt [3][]float32
			for i := range w {
				w[i] = m.f32Row(r0 + min(i, nr-1))
			}
			b := 0
			for ; b+3 <= batch; b += 3 {
				xt = [3][]float32{xs(b), xs(b + 1), xs(b + 2)}
				kern.f32Tile4x3(&o12, &w, &xt)
				for t := 0; t < 3; t++ {
					for i := 0; i < nr; i++ {
						out[(b+t)*rows+r0+i] = o12[4*t+i]
					}
				}
			}
			for ; b < batch; b++ {
				kern.f32Rows4(&o4, &w, xs(b))
				for i := 0; i < nr; i++ {
					out[b*rows+r0+i] = o4[i]
				}
			}
		})
	}
}

// forRowGroups calls fn(r0, nr) for the groups of per rows (nr < per only
// for the last), spread over threads; work is the multiply-adds per row.
func forRowGroups(threads, rows, per, work int, fn func(r0, nr int)) {
	groups := (rows + per - 1) / per
	grain := max(1, chunkWork/(per*work))
	parallelFor(threads, groups, grain, func(_, lo, hi int) {
		for g := lo; g < hi; g++ {
			r0 := g * per
			fn(r0, min(per, rows-r0))
		}
	})
}
