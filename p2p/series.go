package p2p

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Series makes one subsystem's tenzro_ series on a registry. A series
// already registered under the same description is shared rather than
// refused, so that two parts on one registry (two holders, a part a
// node restarts) count into the same series.
type Series struct {
	reg       prometheus.Registerer
	subsystem string
}

// NewSeries makes subsystem's series on reg (a private registry when
// nil).
func NewSeries(reg prometheus.Registerer, subsystem string) Series {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	return Series{reg: reg, subsystem: subsystem}
}

// Counter is the counter tenzro_<subsystem>_<name>.
func (s Series) Counter(name, help string) prometheus.Counter {
	return Register(s.reg, prometheus.NewCounter(s.opts(name, help)))
}

// CounterVec is the counter tenzro_<subsystem>_<name> by labels.
func (s Series) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return Register(s.reg, prometheus.NewCounterVec(s.opts(name, help), labels))
}

func (s Series) opts(name, help string) prometheus.CounterOpts {
	return prometheus.CounterOpts{Namespace: "tenzro", Subsystem: s.subsystem, Name: name, Help: help}
}

// Register registers c on reg, or returns the collector registered before
// under the same description, for series a Series does not make. Any
// other refusal (a name taken with other labels or help) is a fault of
// the code, not of the run: it panics.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
		panic("p2p: metrics: " + err.Error())
	}
	return c
}
