package strategy

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// latencyFloor keeps latency ratios finite and stops sub-millisecond
// differences between fast providers from dominating the score.
const latencyFloor = time.Millisecond

// Rank orders the eligible candidates by strategy name: the primary first,
// then its fallbacks. A candidate is left out when it is down, its breaker
// refuses, the filter excludes it, its price exceeds the filter's cap, or
// its peer appeared earlier in cands. Providers whose heartbeat shows them
// saturated come after every provider with headroom, whatever the
// strategy. Ties break on price, then latency, then peer ID, so the order
// is deterministic (for Random, given the source).
//
// With no eligible candidate Rank returns the exclusions and an error
// wrapping ErrNoCandidate.
func (s *Selector) Rank(name Name, cands []Candidate, f Filter) (Ranking, error) {
	if name == "" {
		name = Weighted
	}
	if _, err := Parse(string(name)); err != nil {
		return Ranking{}, err
	}
	var r Ranking
	seen := make(map[string]bool, len(cands))
	var ok []Candidate
	for _, c := range cands {
		reason := Reason("")
		switch {
		case seen[string(c.Peer)]:
			reason = ReasonDuplicate
		case f.Exclude[c.Peer]:
			reason = ReasonExcluded
		case !c.Up:
			reason = ReasonDown
		case !c.BreakerReady:
			reason = ReasonBreaker
		case f.MaxPrice > 0 && c.Price > f.MaxPrice:
			reason = ReasonOverPrice
		}
		seen[string(c.Peer)] = true
		if reason != "" {
			r.Excluded = append(r.Excluded, Exclusion{Peer: c.Peer, Reason: reason})
			continue
		}
		ok = append(ok, c)
	}
	if len(ok) == 0 {
		return r, fmt.Errorf("%w: %d candidates, all excluded %s", ErrNoCandidate, len(cands), summarize(r.Excluded))
	}

	sig := newSignals(ok)
	r.Order = make([]Scored, len(ok))
	for i, c := range ok {
		r.Order[i] = Scored{Candidate: c, Score: sig.score(i, s.weights)}
	}
	idx := make([]int, len(ok)) // sort indexes so signals stay addressable
	for i := range idx {
		idx[i] = i
	}
	tie := func(a, b int) int {
		return cmp.Or(cmp.Compare(ok[a].Price, ok[b].Price), cmp.Compare(sig.lat[a], sig.lat[b]),
			cmp.Compare(ok[a].Peer, ok[b].Peer))
	}
	headroom := func(a, b int) int {
		return cmp.Compare(boolInt(ok[a].Saturated()), boolInt(ok[b].Saturated()))
	}
	var by func(a, b int) int
	switch name {
	case Price:
		by = func(a, b int) int {
			return cmp.Or(cmp.Compare(ok[a].Price, ok[b].Price), cmp.Compare(sig.lat[a], sig.lat[b]),
				-cmp.Compare(sig.standing[a], sig.standing[b]), cmp.Compare(ok[a].Peer, ok[b].Peer))
		}
	case Latency:
		by = func(a, b int) int {
			return cmp.Or(cmp.Compare(sig.lat[a], sig.lat[b]), cmp.Compare(sig.p95[a], sig.p95[b]), tie(a, b))
		}
	case Standing:
		by = func(a, b int) int { return cmp.Or(-cmp.Compare(sig.standing[a], sig.standing[b]), tie(a, b)) }
	case Weighted:
		by = func(a, b int) int { return cmp.Or(-cmp.Compare(r.Order[a].Score, r.Order[b].Score), tie(a, b)) }
	case Random:
		by = func(a, b int) int { return cmp.Compare(ok[a].Peer, ok[b].Peer) }
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Or(headroom(a, b), by(a, b)) })
	if name == Random {
		s.shuffle(idx, func(i int) bool { return ok[i].Saturated() })
	}
	sorted := make([]Scored, len(idx))
	for i, j := range idx {
		sorted[i] = r.Order[j]
	}
	r.Order = sorted
	return r, nil
}

// shuffle permutes idx uniformly within its headroom and saturated runs.
func (s *Selector) shuffle(idx []int, saturated func(int) bool) {
	split := len(idx)
	for i, j := range idx {
		if saturated(j) {
			split = i
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, part := range [][]int{idx[:split], idx[split:]} {
		for i := len(part) - 1; i > 0; i-- {
			j := s.rnd.IntN(i + 1)
			part[i], part[j] = part[j], part[i]
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func summarize(ex []Exclusion) string {
	counts := map[Reason]int{}
	for _, e := range ex {
		counts[e.Reason]++
	}
	out := "("
	for _, r := range []Reason{ReasonDown, ReasonBreaker, ReasonExcluded, ReasonOverPrice, ReasonDuplicate} {
		if counts[r] > 0 {
			if len(out) > 1 {
				out += ", "
			}
			out += fmt.Sprintf("%d %s", counts[r], r)
		}
	}
	return out + ")"
}
