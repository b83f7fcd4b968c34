package gateway

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/router/quantile"
)

// A stream is judged stalled against its own provider's pace, not only
// against the fixed stall_timeout: a provider killed mid-stream on a real
// network (or a QUIC peer that vanished) sends nothing, not a reset, and
// a fixed 10 s wait was the soak's p99 for such streams. Once a provider
// has shown enough gaps between tokens, its stall timeout is stallFactor
// times their p95, no shorter than stall_min and no longer than
// stall_timeout.
const (
	stallFactor = 16
	// stallSamples gaps must be seen before the adaptive timeout applies.
	stallSamples = 64
)

// gapTracker holds each provider's gaps between consecutive token frames.
type gapTracker struct{ set *quantile.Set[peer.ID] }

func newGapTracker() (*gapTracker, error) {
	s, err := quantile.NewSet[peer.ID](quantile.Config{})
	if err != nil {
		return nil, err
	}
	return &gapTracker{set: s}, nil
}

// observe records one gap the network made (time spent waiting for the
// frame, not time the gateway spent passing the previous one on).
func (g *gapTracker) observe(p peer.ID, d time.Duration) { g.set.Observe(p, d) }

// stallTimeout is the stall timeout for a stream from p under cfg; 0 when
// stall detection is off.
func (g *gapTracker) stallTimeout(cfg Config, p peer.ID) time.Duration {
	if cfg.StallTimeout <= 0 {
		return 0
	}
	snap := g.set.Snapshot(p)
	if snap.Count < stallSamples {
		return cfg.StallTimeout
	}
	return min(max(stallFactor*snap.P95, cfg.StallMin), cfg.StallTimeout)
}

// tokenPace measures the gaps of one attempt's stream.
type tokenPace struct {
	g    *gapTracker
	p    peer.ID
	last time.Time // when the previous frame had been passed on
}

// arrived is called as a frame arrives; done once it has been passed on.
func (t *tokenPace) arrived(now time.Time) {
	if !t.last.IsZero() {
		t.g.observe(t.p, now.Sub(t.last))
	}
}

func (t *tokenPace) done(now time.Time) { t.last = now }
