package settle

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// register registers c on reg, or returns the collector already
// registered under the same description, so that two components sharing
// a registry (tests, a node restarting a part) share the series.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
		panic("settle: metrics: " + err.Error())
	}
	return c
}

func counter(reg prometheus.Registerer, side, name, help string) prometheus.Counter {
	return register(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "tenzro", Subsystem: "settle", Name: side + "_" + name, Help: help}))
}

func counterVec(reg prometheus.Registerer, side, name, help string, labels ...string) *prometheus.CounterVec {
	return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "tenzro", Subsystem: "settle", Name: side + "_" + name, Help: help}, labels))
}

func gaugeVec(reg prometheus.Registerer, side, name, help string, labels ...string) *prometheus.GaugeVec {
	return register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "tenzro", Subsystem: "settle", Name: side + "_" + name, Help: help}, labels))
}

// sideMetrics are the series both halves keep, under their own prefix
// (outbox_, collector_), so one process may run both.
type sideMetrics struct {
	submitted, settled, duplicate prometheus.Counter
	preempted                     prometheus.Counter
	skipped                       *prometheus.CounterVec // by code
	submitErrors                  prometheus.Counter
}

func newSideMetrics(reg prometheus.Registerer, side string) sideMetrics {
	return sideMetrics{
		submitted: counter(reg, side, "records_submitted_total", "Payment records sent to the chain in settlement transactions."),
		settled:   counter(reg, side, "records_settled_total", "Payment records known settled: by this node's transaction or found settled on chain."),
		duplicate: counter(reg, side, "records_duplicate_total", "Submitted payment records the chain skipped as already settled."),
		preempted: counter(reg, side, "records_preempted_total",
			"Payment records whose call the chain settled with another record (a duplicate whose digest is not this record's): not paid by this record."),
		skipped:      counterVec(reg, side, "records_skipped_total", "Payment records the chain refused for good, by skip code.", "code"),
		submitErrors: counter(reg, side, "submit_errors_total", "Settlement transactions that did not commit (their records are retried)."),
	}
}

// noteOutcome counts one SubmitAll outcome.
func (m sideMetrics) noteOutcome(o Outcome) {
	switch o.Status {
	case Settled:
		m.settled.Inc()
	case Duplicate:
		m.duplicate.Inc()
		m.settled.Inc()
	case Skipped:
		m.skipped.WithLabelValues(o.Code.String()).Inc()
	case Preempted:
		m.preempted.Inc()
	}
}

// registry returns reg, or a private registry when nil.
func registry(reg prometheus.Registerer) prometheus.Registerer {
	if reg == nil {
		return prometheus.NewRegistry()
	}
	return reg
}
