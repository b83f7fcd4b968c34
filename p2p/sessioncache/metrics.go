package sessioncache

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Rejection reasons, the label of tenzro_session_cache_rejected_total.
const (
	ReasonMalformed    = "malformed"     // a frame or state that does not decode
	ReasonWrongKey     = "wrong_key"     // sealed to another successor's key
	ReasonAltered      = "altered"       // signature, ciphertext, AAD or hash does not check
	ReasonReplayed     = "replayed"      // a turn not newer than the one held
	ReasonWrongPrimary = "wrong_primary" // signed or sent by a machine the assignment did not name
	ReasonUnassigned   = "unassigned"    // a state or challenge for a session not assigned here
	ReasonWrongModel   = "wrong_model"   // a state of another model than the assignment's
	ReasonNotStandby   = "not_standby"   // an assignment for a model this node does not stand by for
	ReasonUnfunded     = "unfunded"      // an assignment without the funded stream a chain requires
	ReasonBadSignature = "bad_signature" // an assignment not signed by the gateway that sent it
)

// Metrics are the session-cache series, on both sides.
type Metrics struct {
	Rejected *prometheus.CounterVec // by reason
	Accepted prometheus.Counter     // states stored
	Assigned prometheus.Counter     // assignments taken
	Sent     prometheus.Counter     // states a primary sealed and delivered
	Failed   prometheus.Counter     // states a primary could not seal or deliver
}

// NewMetrics registers the series on reg (a private registry when nil);
// two holders sharing a registry share the series.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	c := func(name, help string) prometheus.Counter {
		return register(reg, prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "session_cache", Name: name, Help: help}))
	}
	return &Metrics{
		Rejected: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "session_cache",
			Name: "rejected_total", Help: "Session-cache states, assignments and challenges refused, by reason."}, []string{"reason"})),
		Accepted: c("states_accepted_total", "Sealed session states verified and stored by this successor."),
		Assigned: c("assigned_total", "Sessions this node was assigned as successor and accepted."),
		Sent:     c("states_sent_total", "Session states this primary sealed and delivered to a successor."),
		Failed:   c("states_send_failed_total", "Session states this primary could not seal or deliver."),
	}
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
		panic("sessioncache: metrics: " + err.Error())
	}
	return c
}
