package gateway

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// sessionMetrics count what sessions did, on /metrics.
type sessionMetrics struct {
	active                                  prometheus.Gauge
	assigned, failovers, streamsOpened      prometheus.Counter
	noSuccessor, streamsStopped, challenges *prometheus.CounterVec
}

func newSessionMetrics(reg prometheus.Registerer) (*sessionMetrics, error) {
	vec := func(name, help, label string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "sessions", Name: name, Help: help}, []string{label})
	}
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "sessions", Name: name, Help: help})
	}
	m := &sessionMetrics{
		active: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "tenzro", Subsystem: "sessions", Name: "active",
			Help: "Sessions the gateway holds."}),
		assigned:      c("successors_assigned_total", "Successors assigned (funded and told which machine is primary)."),
		failovers:     c("failovers_total", "Turns served by the session's successor after its primary was down or failed."),
		streamsOpened: c("streams_opened_total", "Standby stream escrows opened from buyers' escrows."),
		noSuccessor:   vec("no_successor_total", "Turns that found no eligible successor, by reason.", "reason"),
		streamsStopped: vec("streams_stopped_total",
			"Standby streams stopped, by why (idle, ended, replaced, promoted, unused, challenge_failed, shutdown).", "why"),
		challenges: vec("challenges_total", "Successor challenges, by result (passed, failed).", "result"),
	}
	if reg == nil {
		return m, nil
	}
	for _, col := range []prometheus.Collector{m.active, m.assigned, m.failovers, m.streamsOpened, m.noSuccessor, m.streamsStopped, m.challenges} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// SessionCounts are the session figures in tenzro_getRouterMetrics.
type SessionCounts struct {
	Active             int               `json:"active"`
	SuccessorsAssigned uint64            `json:"successors_assigned"`
	Failovers          uint64            `json:"failovers_to_successor"`
	StreamsOpened      uint64            `json:"streams_opened"`
	StreamsStopped     map[string]uint64 `json:"streams_stopped"` // by why
	NoSuccessor        map[string]uint64 `json:"no_successor"`    // by reason
	Challenges         map[string]uint64 `json:"challenges"`      // by result
}

func (m *sessionMetrics) snapshot(active int) *SessionCounts {
	d := &dtoMetric{}
	return &SessionCounts{Active: active, SuccessorsAssigned: d.read(m.assigned), Failovers: d.read(m.failovers),
		StreamsOpened: d.read(m.streamsOpened), StreamsStopped: byLabel(m.streamsStopped), NoSuccessor: byLabel(m.noSuccessor),
		Challenges: byLabel(m.challenges)}
}

// byLabel reads a one-label counter vector as label value → count.
func byLabel(v *prometheus.CounterVec) map[string]uint64 {
	ch := make(chan prometheus.Metric, 16)
	go func() {
		v.Collect(ch)
		close(ch)
	}()
	out := map[string]uint64{}
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil || d.Counter == nil || len(d.Label) != 1 {
			continue
		}
		out[d.Label[0].GetValue()] = uint64(d.Counter.GetValue())
	}
	return out
}
