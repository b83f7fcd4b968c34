package gossip

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts validation verdicts per topic and reason, for Prometheus
// and for the topic listing of the JSON-RPC API.
type Metrics struct {
	messages *prometheus.CounterVec
	verdicts map[string]*[3]atomic.Uint64 // topic → counts by Verdict; fixed after setup
}

func newMetrics(reg prometheus.Registerer, topics []string) (*Metrics, error) {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tenzro",
			Subsystem: "gossip",
			Name:      "messages_total",
			Help:      "Gossip messages validated, by topic, verdict (accept/ignore/reject) and reason.",
		}, []string{"topic", "verdict", "reason"}),
		verdicts: make(map[string]*[3]atomic.Uint64, len(topics)),
	}
	for _, t := range topics {
		m.verdicts[t] = new([3]atomic.Uint64)
	}
	if reg != nil {
		if err := reg.Register(m.messages); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) observe(topic string, r Result) {
	m.messages.WithLabelValues(topic, r.Verdict.String(), r.Reason).Inc()
	if c, ok := m.verdicts[topic]; ok {
		c[r.Verdict].Add(1)
	}
}

// Counts returns the accepted, ignored and rejected totals of topic.
func (m *Metrics) Counts(topic string) (accepted, ignored, rejected uint64) {
	c, ok := m.verdicts[topic]
	if !ok {
		return 0, 0, 0
	}
	return c[Accept].Load(), c[Ignore].Load(), c[Reject].Load()
}
