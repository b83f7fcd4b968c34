package llm

import "container/heap"

// mergeSymbols runs the greedy pair-merging loop shared by SentencePiece
// BPE and byte-level BPE. The text is split into initial symbols at the
// given byte boundaries; rank(l, r) returns the priority of merging the
// adjacent symbols l and r (lower merges first) and ok=false when they do
// not merge. Ties go to the leftmost pair. It returns the final symbols as
// byte ranges of text.
func mergeSymbols(text string, bounds []int, rank func(l, r string) (float64, bool)) [][2]int {
	n := len(bounds) - 1
	syms := make([]sym, n)
	for i := range syms {
		syms[i] = sym{start: bounds[i], end: bounds[i+1], prev: i - 1, next: i + 1}
	}
	if n > 0 {
		syms[n-1].next = -1
	}
	var q pairQueue
	try := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		p, ok := rank(text[syms[l].start:syms[l].end], text[syms[r].start:syms[r].end])
		if ok {
			heap.Push(&q, pair{left: l, right: r, rank: p, size: syms[r].end - syms[l].start})
		}
	}
	for i := 0; i+1 < n; i++ {
		try(i, i+1)
	}
	for q.Len() > 0 {
		p := heap.Pop(&q).(pair) //nolint:forcetypeassert // the heap holds only what try pushed: pairs
		l, r := &syms[p.left], &syms[p.right]
		if l.end == l.start || r.end == r.start || l.next != p.right || r.end-l.start != p.size {
			continue // stale: one side has merged since
		}
		l.end = r.end
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = p.left
		}
		r.start, r.end = 0, 0
		try(l.prev, p.left)
		try(p.left, l.next)
	}
	out := make([][2]int, 0, n)
	for i := 0; i >= 0 && i < n; i = syms[i].next {
		out = append(out, [2]int{syms[i].start, syms[i].end})
	}
	return out
}

type sym struct {
	start, end int
	prev, next int
}

type pair struct {
	left, right int
	rank        float64
	size        int
}

type pairQueue []pair

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].left < q[j].left
}
func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(pair)) } //nolint:forcetypeassert // heap.Push is called with pairs only
func (q *pairQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
