package expert

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tenzrod/tenzrod/p2p"
)

// Metrics are the expert protocol's series, caller and holder side. A
// retired exchange is counted here and in the caller's breaker only: a
// holder's standing falls only through a dispute verdict.
type Metrics struct {
	Retired      *prometheus.CounterVec // caller: exchanges retired, by reason (Reason*)
	Exchanges    prometheus.Counter     // caller: exchanges verified and used
	ExpertTokens prometheus.Counter     // caller: rows computed remotely and verified
	NoHolder     prometheus.Counter     // caller: batches failed for want of a holder
	WireBytes    *prometheus.CounterVec // caller: frame bytes, by direction (sent, received)
	Served       prometheus.Counter     // holder: exchanges answered with rows and a receipt
	ServedRows   prometheus.Counter     // holder: rows computed
	Sampled      prometheus.Counter     // caller: verified batches picked for re-execution
	Rechecked    *prometheus.CounterVec // re-executions of stored batches, by result (match, mismatch, failed)
	Disputes     *prometheus.CounterVec // serving node: evidence taken to the chain, by outcome (Dispute*)
}

// NewMetrics registers the series on reg (a private registry when nil);
// parts sharing a registry share the series.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	s := p2p.NewSeries(reg, "expert")
	return &Metrics{
		Retired:      s.CounterVec("retired_total", "Expert exchanges whose holder was retired for the batch, by reason.", "reason"),
		Exchanges:    s.Counter("exchanges_total", "Expert exchanges whose receipt verified and whose rows were used."),
		ExpertTokens: s.Counter("expert_tokens_total", "Expert rows computed at holders and verified."),
		NoHolder:     s.Counter("no_holder_total", "Expert batches that failed a forward pass for want of a holder."),
		WireBytes:    s.CounterVec("wire_bytes_total", "Expert protocol frame bytes of this caller, by direction.", "direction"),
		Served:       s.Counter("served_total", "Expert exchanges this holder answered with rows and a signed receipt."),
		ServedRows:   s.Counter("served_rows_total", "Expert rows this holder computed."),
		Sampled:      s.Counter("sampled_total", "Verified expert batches stored in full for re-execution."),
		Rechecked: s.CounterVec("rechecked_total",
			"Stored expert batches re-executed, by result (match, mismatch: dispute evidence, failed).", "result"),
		Disputes: s.CounterVec("disputes_total",
			"Dispute evidence taken to the chain, by outcome (opened; known: opened before; refused: can never be; failed: retried).", "outcome"),
	}
}
