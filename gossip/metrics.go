package gossip

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts validation verdicts per topic and reason, for Prometheus
// and for the topic listing of the JSON-RPC API.
type Metrics struct {
	messages *prometheus.CounterVec
	seconds  *prometheus.CounterVec
	panics   *prometheus.CounterVec
	verdicts map[string]*[3]atomic.Uint64 // topic → counts by Verdict; fixed after setup
	nanos    map[string]*atomic.Int64     // topic → time spent validating; fixed after setup
}

func newMetrics(reg prometheus.Registerer, topics []string) (*Metrics, error) {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tenzro",
			Subsystem: "gossip",
			Name:      "messages_total",
			Help:      "Gossip messages validated, by topic, verdict (accept/ignore/reject) and reason.",
		}, []string{"topic", "verdict", "reason"}),
		// What a node pays to keep up with the market grows with the
		// providers: this is the figure an operator watches.
		seconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tenzro",
			Subsystem: "gossip",
			Name:      "validation_seconds_total",
			Help:      "Wall time spent in the topic validators, by topic.",
		}, []string{"topic"}),
		// A handler that panics on an accepted message is a local bug,
		// not the sender's fault: counted apart from the verdicts.
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "tenzro",
			Subsystem: "gossip",
			Name:      "handler_panics_total",
			Help:      "Panics recovered in the handlers of accepted gossip messages, by topic.",
		}, []string{"topic"}),
		verdicts: make(map[string]*[3]atomic.Uint64, len(topics)),
		nanos:    make(map[string]*atomic.Int64, len(topics)),
	}
	for _, t := range topics {
		m.verdicts[t] = new([3]atomic.Uint64)
		m.nanos[t] = new(atomic.Int64)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.messages, m.seconds, m.panics} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *Metrics) observe(topic string, r Result, took time.Duration) {
	m.messages.WithLabelValues(topic, r.Verdict.String(), r.Reason).Inc()
	m.seconds.WithLabelValues(topic).Add(took.Seconds())
	if c, ok := m.verdicts[topic]; ok {
		c[r.Verdict].Add(1)
	}
	if n, ok := m.nanos[topic]; ok {
		n.Add(int64(took))
	}
}

// ValidationTime returns the total wall time the validators of topic took.
func (m *Metrics) ValidationTime(topic string) time.Duration {
	if n, ok := m.nanos[topic]; ok {
		return time.Duration(n.Load())
	}
	return 0
}

// Counts returns the accepted, ignored and rejected totals of topic.
func (m *Metrics) Counts(topic string) (accepted, ignored, rejected uint64) {
	c, ok := m.verdicts[topic]
	if !ok {
		return 0, 0, 0
	}
	return c[Accept].Load(), c[Ignore].Load(), c[Reject].Load()
}
