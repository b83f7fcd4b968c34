package llm

import "github.com/tenzrod/tenzrod/inference/gguf"

// serialWork is the number of multiply-adds below which a product runs on
// the calling goroutine: waking helpers costs more than it saves.
const serialWork = 1 << 16

// chunkWork is the least work (multiply-adds) of one parallel chunk.
const chunkWork = 1 << 15

// product is one matrix product: out[b*m.Rows+r] = row r of m ·
// x[b*m.Cols:] for b in [0, batch).
type product struct {
	out   []float32
	m     *Matrix
	x     []float32
	batch int
}

// matmul computes one product.
func matmul(threads int, out []float32, m *Matrix, x []float32, batch int) {
	matmuls(threads, product{out, m, x, batch})
}

// matmuls computes products that do not depend on each other (Q, K and V;
// gate and up) in one parallel pass, so that the workers meet once rather
// than once per product. Each output is one dot product in a fixed order
// (dot, dotF16 or dotQ8), whatever the thread count, batch size or kernel
// set: the kernels compute tiles of rows x tokens, padding a short last
// tile with copies of its last row or token and discarding their outputs.
func matmuls(threads int, ps ...product) {
	type plan struct {
		groups, per, rows int
		fn                func(tb *tileBuf, r0, nr int)
	}
	plans := make([]plan, len(ps))
	total, work := 0, 0
	for i, p := range ps {
		per, fn := groupFunc(p)
		plans[i] = plan{(p.m.Rows + per - 1) / per, per, p.m.Rows, fn}
		total += plans[i].groups
		work += p.m.Rows * p.m.Cols * p.batch
	}
	if work < serialWork {
		threads = 1
	}
	grain := max(1, chunkWork*total/max(work, 1))
	parallelFor(threads, total, grain, func(_, lo, hi int) {
		tb := new(tileBuf) // one per chunk: the kernels' arguments escape
		i, base := 0, 0
		for g := lo; g < hi; g++ {
			for g-base >= plans[i].groups {
				base += plans[i].groups
				i++
			}
			pl := &plans[i]
			r0 := (g - base) * pl.per
			pl.fn(tb, r0, min(pl.per, pl.rows-r0))
		}
	})
}

// tileBuf holds the kernels' arguments and results. They are passed by
// pointer through the kernel set's function values, so the compiler puts
// them on the heap: a tileBuf is allocated once per chunk of row groups
// rather than once per group.
type tileBuf struct {
	w4  [4][]float32
	h4  [4][]uint16
	q4  [4][]int8
	d4  [4][]float32
	q2  [2][]int8
	d2  [2][]float32
	x3  [3][]float32
	x4  [4][]float32
	o4  [4]float32
	o8  [8]float32
	o12 [12]float32
}

// groupFunc returns the rows per group of p's kernel and the function that
// computes the outputs of rows [r0, r0+nr).
func groupFunc(p product) (int, func(tb *tileBuf, r0, nr int)) {
	out, m, x, batch := p.out, p.m, p.x, p.batch
	rows, cols := m.Rows, m.Cols
	_ = out[batch*rows-1]
	_ = x[batch*cols-1]
	xs := func(b int) []float32 { return x[b*cols : (b+1)*cols : (b+1)*cols] }
	// Q4_K: a Q8_0 product less the mins' term (q4k.go), subtracted from
	// each output once its tile is written.
	var sums []float32
	if m.q4min != nil {
		sums = blockSums(x, cols, batch)
	}
	fix := func(r0, nr, b0, nb int) {
		if sums == nil {
			return
		}
		for b := b0; b < b0+nb; b++ {
			for r := r0; r < r0+nr; r++ {
				out[b*rows+r] -= minTerm(m.q4Mins(r), sums[b*(cols/qk):])
			}
		}
	}
	switch {
	case m.q8 != nil && batch == 1:
		return 4, func(tb *tileBuf, r0, nr int) {
			q, d, o := &tb.q4, &tb.d4, &tb.o4
			for i := range q {
				q[i], d[i] = m.q8Row(r0 + min(i, nr-1))
			}
			kern.q8Rows4(o, q, d, x[:cols])
			copy(out[r0:r0+nr], o[:nr])
			fix(r0, nr, 0, 1)
		}
	case m.q8 != nil:
		return 2, func(tb *tileBuf, r0, nr int) {
			q, d, o, xt := &tb.q2, &tb.d2, &tb.o8, &tb.x4
			for i := range q {
				q[i], d[i] = m.q8Row(r0 + min(i, nr-1))
			}
			for b := 0; b < batch; b += 4 {
				nt := min(4, batch-b)
				for t := range xt {
					xt[t] = xs(b + min(t, nt-1))
				}
				kern.q8Tile2x4(o, q, d, xt)
				for i := 0; i < nr; i++ {
					for t := 0; t < nt; t++ {
						out[(b+t)*rows+r0+i] = o[4*i+t]
					}
				}
				fix(r0, nr, b, nt)
			}
		}
	case cols%8 != 0:
		// Lengths the vector kernels do not take: the reference per output.
		return 1, func(_ *tileBuf, r, _ int) {
			var buf []float32
			if m.Type != gguf.TypeF32 {
				buf = make([]float32, cols)
			}
			row := m.Row(r, buf)
			for b := 0; b < batch; b++ {
				out[b*rows+r] = dot(row, xs(b))
			}
		}
	case m.Type == gguf.TypeF16:
		return 4, func(tb *tileBuf, r0, nr int) {
			w, o := &tb.h4, &tb.o4
			for i := range w {
				w[i] = m.f16Row(r0 + min(i, nr-1))
			}
			for b := 0; b < batch; b++ {
				kern.f16Rows4(o, w, xs(b))
				for i := 0; i < nr; i++ {
					out[b*rows+r0+i] = o[i]
				}
			}
		}
	default:
		return 4, func(tb *tileBuf, r0, nr int) {
			w, o4, o12, xt := &tb.w4, &tb.o4, &tb.o12, &tb.x3
			for i := range w {
				w[i] = m.f32Row(r0 + min(i, nr-1))
			}
			b := 0
			for ; b+3 <= batch; b += 3 {
				*xt = [3][]float32{xs(b), xs(b + 1), xs(b + 2)}
				kern.f32Tile4x3(o12, w, xt)
				for t := 0; t < 3; t++ {
					copy(out[(b+t)*rows+r0:(b+t)*rows+r0+nr], o12[4*t:4*t+nr])
				}
			}
			for ; b < batch; b++ {
				kern.f32Rows4(o4, w, xs(b))
				for i := 0; i < nr; i++ {
					out[b*rows+r0+i] = o4[i]
				}
			}
		}
	}
}
