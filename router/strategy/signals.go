package strategy

import (
	"slices"
	"time"
)

// signals are the per-candidate figures the comparators and the weighted
// score read, with unknown latencies filled in.
type signals struct {
	cands    []Candidate
	lat      []time.Duration // effective latency: (p95 + mean) / 2
	p95      []time.Duration
	standing []uint32 // clamped to MaxStanding
	minPrice uint64
	minLat   time.Duration
}

// newSignals derives the signals of cs (non-empty).
//
// A provider the router has never timed gets the median of the known
// figures: it is neither preferred over measured providers nor starved of
// the traffic that would measure it. With no provider timed, latency ranks
// nobody.
func newSignals(cs []Candidate) *signals {
	s := &signals{cands: cs, lat: make([]time.Duration, len(cs)), p95: make([]time.Duration, len(cs)),
		standing: make([]uint32, len(cs)), minPrice: cs[0].Price}
	var knownLat, knownP95 []time.Duration
	for _, c := range cs {
		if c.LatencyKnown {
			knownLat = append(knownLat, c.P95/2+c.Mean/2)
			knownP95 = append(knownP95, c.P95)
		}
	}
	medLat, medP95 := lowerMedian(knownLat), lowerMedian(knownP95)
	for i, c := range cs {
		s.lat[i], s.p95[i] = medLat, medP95
		if c.LatencyKnown {
			s.lat[i], s.p95[i] = c.P95/2+c.Mean/2, c.P95
		}
		s.standing[i] = min(c.Standing, MaxStanding)
		s.minPrice = min(s.minPrice, c.Price)
		if i == 0 || s.lat[i] < s.minLat {
			s.minLat = s.lat[i]
		}
	}
	return s
}

func lowerMedian(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[(len(ds)-1)/2]
}

// score is candidate i's weighted score in [0, 1], higher is better. Each
// signal is normalised to [0, 1] with 1 for the best:
//
//	price    (min price + 1) / (price + 1)      relative to the cheapest
//	latency  (min lat + 1 ms) / (lat + 1 ms)    relative to the fastest
//	standing standing / 10 000
//	load     1 - in-flight / capacity           0.5 when capacity is unknown
//
// Ratios rather than min-max scaling keep one outlier from compressing
// everyone else's differences, and a provider twice as expensive as the
// cheapest scores about half on price however the others are spread.
func (s *signals) score(i int, w Weights) float64 {
	c := s.cands[i]
	price := (float64(s.minPrice) + 1) / (float64(c.Price) + 1)
	lat := float64(s.minLat+latencyFloor) / float64(s.lat[i]+latencyFloor)
	standing := float64(s.standing[i]) / MaxStanding
	load := 0.5
	if c.Capacity > 0 {
		load = 1 - min(1, float64(c.InFlight)/float64(c.Capacity))
	}
	total := w.Price + w.Latency + w.Standing + w.Load
	return (w.Price*price + w.Latency*lat + w.Standing*standing + w.Load*load) / total
}
