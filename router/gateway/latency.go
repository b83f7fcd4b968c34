package gateway

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/router/hedge"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// LatencyKept is how many of a provider's latest time-to-first-token
// samples the gateway keeps beside its P² estimate, for plotting: the
// estimator itself keeps five markers, not a distribution.
const LatencyKept = 256

// LatencyView is one provider's recent latency distribution with the two
// figures routing takes from it.
type LatencyView struct {
	Provider string `json:"provider"`
	// SamplesMs are the latest observations (oldest first) the p95 was fed:
	// times to first token, first-token timeouts, and cancelled attempts
	// slower than the p95 (marked in Censored by index).
	SamplesMs []float64 `json:"samples_ms"`
	Censored  []int     `json:"censored,omitempty"`
	// Count is every observation over the tracker's life.
	Count        int     `json:"count"`
	P95Ms        float64 `json:"p95_ms"`
	MeanMs       float64 `json:"mean_ms"`
	HedgeDelayMs float64 `json:"hedge_delay_ms"` // what a request with this primary waits before hedging
}

type latencySample struct {
	d        time.Duration
	censored bool
}

// latencyLog is a bounded ring of samples per provider; safe for
// concurrent use.
type latencyLog struct {
	mu sync.Mutex
	m  map[peer.ID]*latencyRing
}

type latencyRing struct {
	buf  [LatencyKept]latencySample
	n    int // samples ever added
	next int
}

func newLatencyLog() *latencyLog { return &latencyLog{m: map[peer.ID]*latencyRing{}} }

func (l *latencyLog) add(p peer.ID, s latencySample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.m[p]
	if !ok {
		r = &latencyRing{}
		l.m[p] = r
	}
	r.buf[r.next] = s
	r.next = (r.next + 1) % LatencyKept
	r.n++
}

// samples returns p's kept samples, oldest first.
func (l *latencyLog) samples(p peer.ID) []latencySample {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.m[p]
	if !ok {
		return nil
	}
	if r.n < LatencyKept {
		return append([]latencySample(nil), r.buf[:r.n]...)
	}
	out := make([]latencySample, 0, LatencyKept)
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

func (l *latencyLog) peers() []peer.ID {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]peer.ID, 0, len(l.m))
	for p := range l.m {
		out = append(out, p)
	}
	return out
}

// observeLatency feeds one latency to p's P² tracker and the sample ring.
func (g *Gateway) observeLatency(p peer.ID, d time.Duration) {
	g.latency.Observe(p, d)
	g.samples.add(p, latencySample{d: d})
}

// observeCensored feeds a cancelled attempt's latency; the ring keeps it
// only when the tracker did, so the plot shows what the p95 saw.
func (g *Gateway) observeCensored(p peer.ID, d time.Duration) {
	if g.latency.ObserveCensored(p, d) {
		g.samples.add(p, latencySample{d: d, censored: true})
	}
}

// Latencies returns every provider's distribution the gateway has
// observed, or only p's when p is set.
func (g *Gateway) Latencies(p peer.ID) []LatencyView {
	ps := g.samples.peers()
	if p != "" {
		ps = []peer.ID{p}
	}
	out := make([]LatencyView, 0, len(ps))
	for _, id := range ps {
		snap := g.latency.Snapshot(id)
		v := LatencyView{Provider: id.String(), SamplesMs: []float64{}, Count: snap.Count, P95Ms: millis(snap.P95), MeanMs: millis(snap.Mean),
			HedgeDelayMs: millis(hedge.Delay(strategy.Candidate{P95: snap.P95, LatencyKnown: snap.Known()}))}
		for i, s := range g.samples.samples(id) {
			v.SamplesMs = append(v.SamplesMs, millis(s.d))
			if s.censored {
				v.Censored = append(v.Censored, i)
			}
		}
		out = append(out, v)
	}
	return out
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
