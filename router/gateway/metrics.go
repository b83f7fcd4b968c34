package gateway

import (
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/router/breaker"
	"github.com/tenzrod/tenzrod/router/hedge"
)

// Metrics counts what the gateway did, overall and per provider, for
// /metrics and tenzro_getRouterMetrics.
type Metrics struct {
	requests, hedges, hedgesWon, deadlineMisses, failovers, continuations, badReceipts, buyersGone, limited, unsigned, waitRetries prometheus.Counter
	expertsCapped                                                                                                                  prometheus.Counter
	attempts                                                                                                                       *prometheus.CounterVec
	paidTotal                                                                                                                      *prometheus.CounterVec
	// req are the per-request families by model, status and provider.
	req *requestMetrics

	mu          sync.Mutex
	perProvider map[peer.ID]*ProviderCounts
}

// ProviderCounts are one provider's figures. Every attempt ends as one of
// ok, failed, throttled, refused or cancelled; failures are only those
// that count against the provider.
type ProviderCounts struct {
	Attempts uint64 `json:"attempts"`
	Failures uint64 `json:"failures"` // 5xx, resets, timeouts, stalls, broken streams
	// Throttled: 429s. Refused: 400-class answers caused by the request
	// (context length, content policy) or a declined continuation.
	Throttled uint64 `json:"throttled"`
	Refused   uint64 `json:"refused"`
	Cancelled uint64 `json:"cancelled"` // lost hedges, deadlines, buyers gone
	Won       uint64 `json:"won"`
	HedgeWon  uint64 `json:"hedges_won"`
	Paid      uint64 `json:"paid"`
	// The router's own latency figures for the provider (time to first
	// token, first-token timeouts and cancelled slow attempts included):
	// the samples behind them and the P² p95 that sets its hedge delay.
	LatencySamples int     `json:"latency_samples"`
	P95Ms          float64 `json:"p95_ms"`
	// Breaker is the provider's circuit breaker now.
	Breaker *BreakerView `json:"breaker,omitempty"`
}

// Snapshot is tenzro_getRouterMetrics' result.
type Snapshot struct {
	RequestsRouted   uint64                     `json:"requests_routed"`
	HedgesDispatched uint64                     `json:"hedges_dispatched"`
	HedgesWon        uint64                     `json:"hedges_won"`
	DeadlineMisses   uint64                     `json:"deadline_misses"`
	Failovers        uint64                     `json:"failovers"`
	Continuations    uint64                     `json:"continuations"`
	BadReceipts      uint64                     `json:"bad_receipts"`
	Providers        map[string]*ProviderCounts `json:"providers"`
	// Sessions are the session table's figures (Gateway.Snapshot).
	Sessions *SessionCounts `json:"sessions,omitempty"`
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "router", Name: name, Help: help})
}

func newMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		// Requests that reached routing, for Snapshot only: /metrics
		// counts every request, by model and status, in req.
		requests:       counter("routed_total", "Requests routed."),
		hedges:         counter("hedges_dispatched_total", "Hedge attempts dispatched."),
		hedgesWon:      counter("hedges_won_total", "Requests won by the hedge."),
		deadlineMisses: counter("deadline_misses_total", "Requests that ran out of their deadline."),
		failovers:      counter("failovers_total", "Failover rounds after both primary and hedge failed."),
		continuations:  counter("continuations_total", "Streams continued on another provider after breaking mid-answer."),
		badReceipts:    counter("bad_receipts_total", "Receipts that failed verification (not paid)."),
		unsigned:       counter("records_unsigned_total", "Billed calls whose payment record could not be signed and kept (the provider is owed them)."),
		limited:        counter("buyer_limited_total", "Requests refused (429) by a buyer's concurrency or rate limit."),
		buyersGone:     counter("buyers_gone_total", "Streams whose buyer left mid-answer (the provider stopped, the delivered part billed)."),
		waitRetries:    counter("wait_retries_total", "Races run again after waiting out every provider's Retry-After or backoff."),
		expertsCapped:  counter("expert_tokens_capped_total", "Receipts claiming more expert-tokens than the model's MoE shape allows (billed at the bound)."),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "router", Name: "attempts_total",
			Help: "Attempts per provider by outcome."}, []string{"provider", "outcome"}),
		paidTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "router", Name: "paid_micro_units_total",
			Help: "Micro-units paid per provider."}, []string{"provider"}),
		perProvider: map[peer.ID]*ProviderCounts{},
		req:         newRequestMetrics(),
	}
	if reg != nil {
		for _, c := range append(m.req.collectors(), m.hedges, m.hedgesWon, m.deadlineMisses, m.failovers, m.continuations, m.badReceipts, m.buyersGone, m.limited, m.unsigned, m.waitRetries, m.expertsCapped, m.attempts, m.paidTotal) {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *Metrics) provider(p peer.ID) *ProviderCounts {
	c, ok := m.perProvider[p]
	if !ok {
		c = &ProviderCounts{}
		m.perProvider[p] = c
	}
	return c
}

func (m *Metrics) attempt(p peer.ID, kind breaker.Kind, cancelled bool) {
	outcome := "ok"
	m.mu.Lock()
	c := m.provider(p)
	c.Attempts++
	switch {
	case cancelled:
		outcome = "cancelled"
		c.Cancelled++
	case kind == breaker.Throttled:
		outcome = "throttled"
		c.Throttled++
	case kind == breaker.Neutral:
		outcome = "refused"
		c.Refused++
	case kind == breaker.Failure:
		outcome = "failed"
		c.Failures++
	}
	m.mu.Unlock()
	m.attempts.WithLabelValues(p.String(), outcome).Inc()
}

func (m *Metrics) record(r hedge.Report) {
	m.hedges.Add(float64(r.HedgesDispatched))
	m.failovers.Add(float64(r.Failovers))
	if r.DeadlineMiss {
		m.deadlineMisses.Inc()
	}
	if r.Winner == "" {
		return
	}
	if r.HedgeWon {
		m.hedgesWon.Inc()
	}
	m.mu.Lock()
	c := m.provider(r.Winner)
	c.Won++
	if r.HedgeWon {
		c.HedgeWon++
	}
	m.mu.Unlock()
}

func (m *Metrics) paid(p peer.ID, amount uint64) {
	m.mu.Lock()
	m.provider(p).Paid += amount
	m.mu.Unlock()
	m.paidTotal.WithLabelValues(p.String()).Add(float64(amount))
}

// Snapshot returns the current figures.
func (m *Metrics) Snapshot() Snapshot {
	val := func(c prometheus.Counter) uint64 {
		var d = &dtoMetric{}
		return d.read(c)
	}
	s := Snapshot{
		RequestsRouted: val(m.requests), HedgesDispatched: val(m.hedges), HedgesWon: val(m.hedgesWon),
		DeadlineMisses: val(m.deadlineMisses), Failovers: val(m.failovers), Continuations: val(m.continuations),
		BadReceipts: val(m.badReceipts), Providers: map[string]*ProviderCounts{},
	}
	m.mu.Lock()
	for p, c := range m.perProvider {
		cc := *c
		s.Providers[p.String()] = &cc
	}
	m.mu.Unlock()
	return s
}
