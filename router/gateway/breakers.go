package gateway

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/router/breaker"
)

// BreakerView is a provider's circuit breaker as operators see it: its
// state, until when an open one refuses, and why it last counted a
// failure.
type BreakerView struct {
	State               string    `json:"state"` // closed | open | half-open
	ConsecutiveFailures int       `json:"consecutive_failures"`
	OpenUntil           time.Time `json:"open_until,omitzero"`
	Opens               uint64    `json:"opens"`
	LastFailure         string    `json:"last_failure,omitempty"`
	LastFailureAt       time.Time `json:"last_failure_at,omitzero"`
}

// breakerWatch keeps why each provider last failed and mirrors breaker
// states into a gauge (0 closed, 1 open, 2 half-open), logging each change.
type breakerWatch struct {
	state *prometheus.GaugeVec

	mu   sync.Mutex
	last map[peer.ID]failure
}

type failure struct {
	why string
	at  time.Time
}

// maxFailureText bounds a remembered failure reason.
const maxFailureText = 200

func newBreakerWatch(reg prometheus.Registerer) (*breakerWatch, error) {
	w := &breakerWatch{last: map[peer.ID]failure{},
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "tenzro", Subsystem: "router", Name: "breaker_state",
			Help: "Each provider's circuit breaker: 0 closed, 1 open, 2 half-open."}, []string{"provider"})}
	if reg != nil {
		if err := reg.Register(w.state); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// failed remembers why p's attempt counted against it.
func (w *breakerWatch) failed(p peer.ID, err error, at time.Time) {
	if err == nil {
		return
	}
	why := err.Error()
	if len(why) > maxFailureText {
		why = why[:maxFailureText]
		for !utf8.ValidString(why) {
			why = why[:len(why)-1]
		}
	}
	w.mu.Lock()
	w.last[p] = failure{why: why, at: at}
	w.mu.Unlock()
}

func (w *breakerWatch) lastFailure(p peer.ID) failure {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[p]
}

// breakerChanged logs and records a provider's breaker transition.
func (g *Gateway) breakerChanged(p peer.ID, from, to breaker.State) {
	g.watch.state.WithLabelValues(p.String()).Set(float64(to))
	f := g.watch.lastFailure(p)
	switch to {
	case breaker.Open:
		s := g.breakers.Get(p).Snapshot()
		g.log.Warn("circuit breaker opened: provider skipped until it passes a probe", "provider", p, "from", from.String(),
			"open_until", s.OpenUntil, "consecutive_failures", s.ConsecutiveFailures, "last_failure", f.why)
	default:
		g.log.Info("circuit breaker changed", "provider", p, "from", from.String(), "to", to.String())
	}
}

// breakerView is p's breaker for the router metrics, nil if it has none.
func (g *Gateway) breakerView(p peer.ID, s breaker.Snapshot) *BreakerView {
	f := g.watch.lastFailure(p)
	return &BreakerView{State: s.State.String(), ConsecutiveFailures: s.ConsecutiveFailures, OpenUntil: s.OpenUntil,
		Opens: s.Opens, LastFailure: f.why, LastFailureAt: f.at}
}

// ProviderHealthy passes independent word that p answered well at time at
// (a validator's successful probe, from the price feed) to p's breaker: an
// open breaker then lets a probe through after its first cooldown instead
// of a cooldown grown by earlier failures.
func (g *Gateway) ProviderHealthy(p peer.ID, at time.Time) {
	g.breakers.Evidence(p, at)
}
