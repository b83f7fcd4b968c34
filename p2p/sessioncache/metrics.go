package sessioncache

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tenzrod/tenzrod/p2p"
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
	s := p2p.NewSeries(reg, "session_cache")
	return &Metrics{
		Rejected: s.CounterVec("rejected_total", "Session-cache states, assignments and challenges refused, by reason.", "reason"),
		Accepted: s.Counter("states_accepted_total", "Sealed session states verified and stored by this successor."),
		Assigned: s.Counter("assigned_total", "Sessions this node was assigned as successor and accepted."),
		Sent:     s.Counter("states_sent_total", "Session states this primary sealed and delivered to a successor."),
		Failed:   s.Counter("states_send_failed_total", "Session states this primary could not seal or deliver."),
	}
}
