package llm

import (
	"sync"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"sync/atomic"
)

// parallelFor runs fn over [0, n) split into chunks of at least grain items,
// on up to threads goroutines. Each call of fn gets its own worker index, so
// it can use per-worker scratch space. Work is partitioned by item: an item's
// result never depends on which worker computed it or on how many there are.
func parallelFor(threads, n, grain int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := (n + grain - 1) / grain
	workers := min(threads, chunks)
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	// Several chunks per worker balance uneven progress between cores.
	chunks = min(chunks, workers*4)
	size := (n + chunks - 1) / chunks
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				lo := c * size
				if lo >= n {
					return
				}
				fn(w, lo, min(lo+size, n))
			}
		}()
	}
	wg.Wait()
}

// scratch is per-worker float32 space.
type scratch struct {
	bufs [][]float32
}

func (s *scratch) get(worker, n int) []float32 {
	for len(s.bufs) <= worker {
		s.bufs = append(s.bufs, nil)
	}
	if cap(s.bufs[worker]) < n {
		s.bufs[worker] = make([]float32, n)
	}
	return s.bufs[worker][:n]
}

// matmul computes out[b*m.Rows+r] = row r of m · x[b*m.Cols:] for b in
// [0, batch). Each output is one dot product in a fixed order, whatever the
// thread count or batch size. F32 rows are used in place, F16 rows decoded
// into per-worker scratch, Q8_0 rows go through matmulQ8.
func matmul(threads int, sc *scratch, out []float32, m *Matrix, x []float32, batch int) {
	rows, cols := m.Rows, m.Cols
	_ = out[batch*rows-1]
	_ = x[batch*cols-1]
	if m.Type == gguf.TypeQ8_0 {
		matmulQ8(threads, sc, out, m, x, batch)
		return
	}
	for w := 0; w < threads; w++ {
		sc.get(w, cols) // allocate before the workers start
	}
	grain := max(1, 16384/(cols*batch))
	parallelFor(threads, rows, grain, func(w, lo, hi int) {
		buf := sc.bufs[w][:cols]
		for r := lo; r < hi; r++ {
			row := m.Row(r, buf)
			for b := 0; b < batch; b++ {
				out[b*rows+r] = dot(row, x[b*cols:(b+1)*cols])
			}
		}
	})
}
