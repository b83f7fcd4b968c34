package llm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelFor runs fn over [0, n) split into chunks of at least grain items,
// on up to threads workers: the caller and helpers from a pool of persistent
// goroutines (starting goroutines for every matrix product costs more than
// a small product). Each call of fn gets its own worker index below
// threads, so it can use per-worker scratch space. Work is partitioned by
// item: an item's result never depends on which worker computed it or on
// how many there are.
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
	j := &job{fn: fn, n: n, size: size, chunks: (n + size - 1) / size}
	// The caller waits for the chunks, not for the helpers: a helper that
	// is scheduled only after the caller took every chunk finds nothing to
	// do and costs the caller nothing (on a loaded machine that wait would
	// be most of a small product's time).
	j.wg.Add(j.chunks)
	for w := 1; w < workers; w++ {
		if !enlist(task{j, w}) {
			break // the caller and the helpers enlisted take every chunk
		}
	}
	j.run(0)
	j.wg.Wait()
}

// job is one parallelFor call; workers claim chunks until none is left.
type job struct {
	fn     func(worker, lo, hi int)
	n      int
	size   int
	chunks int
	next   atomic.Int64
	wg     sync.WaitGroup // chunks not yet done
}

func (j *job) run(w int) {
	for {
		c := int(j.next.Add(1) - 1)
		if c >= j.chunks {
			return
		}
		lo := c * j.size
		j.fn(w, lo, min(lo+j.size, j.n))
		j.wg.Done()
	}
}

type task struct {
	j *job
	w int
}

var (
	tasks      = make(chan task) // unbuffered: a send succeeds only to an idle helper
	helpers    atomic.Int64
	maxHelpers = int64(4 * runtime.NumCPU())
)

// enlist hands t to an idle helper, or starts a new one while there are
// fewer than maxHelpers. Helpers live for the life of the process.
func enlist(t task) bool {
	select {
	case tasks <- t:
		return true
	default:
	}
	if helpers.Add(1) > maxHelpers {
		helpers.Add(-1)
		return false
	}
	go helper(t)
	return true
}

func helper(t task) {
	for {
		t.j.run(t.w)
		t = <-tasks
	}
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
