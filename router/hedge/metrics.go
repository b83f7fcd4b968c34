package hedge

import (
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Counters are the router metrics of DESIGN.md (tenzro_getRouterMetrics)
// that Run's reports feed.
type Counters struct {
	RequestsRouted   uint64 `json:"requests_routed"`
	Succeeded        uint64 `json:"succeeded"`
	HedgesDispatched uint64 `json:"hedges_dispatched"`
	HedgesWon        uint64 `json:"hedges_won"`
	DeadlineMisses   uint64 `json:"deadline_misses"`
	Failovers        uint64 `json:"failovers"`
}

// ProviderCounters are one provider's share of the metrics.
type ProviderCounters struct {
	Attempts         uint64 `json:"attempts"`
	Wins             uint64 `json:"wins"`
	Failures         uint64 `json:"failures"`   // retryable failures
	Rejections       uint64 `json:"rejections"` // permanent (request) errors
	Cancelled        uint64 `json:"cancelled"`
	HedgesDispatched uint64 `json:"hedges_dispatched"` // hedges sent to it
	HedgesWon        uint64 `json:"hedges_won"`
	DeadlineMisses   uint64 `json:"deadline_misses"` // requests it was primary for
	Failovers        uint64 `json:"failovers"`       // failover rounds it led
}

// Metrics accumulates reports. It is safe for concurrent use.
type Metrics struct {
	mu    sync.Mutex
	total Counters
	per   map[peer.ID]*ProviderCounters
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics { return &Metrics{per: make(map[peer.ID]*ProviderCounters)} }

// Record adds one request's report.
func (m *Metrics) Record(r Report) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total.RequestsRouted++
	if r.Winner != "" {
		m.total.Succeeded++
	}
	m.total.HedgesDispatched += uint64(r.HedgesDispatched)
	m.total.Failovers += uint64(r.Failovers)
	if r.HedgeWon {
		m.total.HedgesWon++
	}
	if r.DeadlineMiss {
		m.total.DeadlineMisses++
	}
	for i, t := range r.Tries {
		p := m.per[t.Peer]
		if p == nil {
			p = &ProviderCounters{}
			m.per[t.Peer] = p
		}
		p.Attempts++
		switch t.Fate {
		case Won:
			p.Wins++
			if t.Hedge {
				p.HedgesWon++
			}
		case Failed:
			p.Failures++
		case Rejected:
			p.Rejections++
		case Cancelled:
			p.Cancelled++
		}
		if t.Hedge {
			p.HedgesDispatched++
		}
		if t.Round > 0 && !t.Hedge {
			p.Failovers++
		}
		if i == 0 && r.DeadlineMiss {
			p.DeadlineMisses++
		}
	}
}

// MetricsSnapshot is a copy of the metrics.
type MetricsSnapshot struct {
	Total       Counters                    `json:"total"`
	PerProvider map[string]ProviderCounters `json:"per_provider"`
}

// Snapshot copies the metrics; providers are keyed by peer ID string.
func (m *Metrics) Snapshot() MetricsSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := MetricsSnapshot{Total: m.total, PerProvider: make(map[string]ProviderCounters, len(m.per))}
	for p, c := range m.per {
		s.PerProvider[p.String()] = *c
	}
	return s
}
