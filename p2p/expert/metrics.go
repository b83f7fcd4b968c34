package expert

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
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
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	c := func(name, help string) prometheus.Counter {
		return register(reg, prometheus.NewCounter(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "expert", Name: name, Help: help}))
	}
	return &Metrics{
		Retired: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "expert",
			Name: "retired_total", Help: "Expert exchanges whose holder was retired for the batch, by reason."}, []string{"reason"})),
		Exchanges:    c("exchanges_total", "Expert exchanges whose receipt verified and whose rows were used."),
		ExpertTokens: c("expert_tokens_total", "Expert rows computed at holders and verified."),
		NoHolder:     c("no_holder_total", "Expert batches that failed a forward pass for want of a holder."),
		WireBytes: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "expert",
			Name: "wire_bytes_total", Help: "Expert protocol frame bytes of this caller, by direction."}, []string{"direction"})),
		Served:     c("served_total", "Expert exchanges this holder answered with rows and a signed receipt."),
		ServedRows: c("served_rows_total", "Expert rows this holder computed."),
		Sampled:    c("sampled_total", "Verified expert batches stored in full for re-execution."),
		Rechecked: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "expert",
			Name: "rechecked_total", Help: "Stored expert batches re-executed, by result (match, mismatch: dispute evidence, failed)."}, []string{"result"})),
		Disputes: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "expert",
			Name: "disputes_total", Help: "Dispute evidence taken to the chain, by outcome (opened; known: opened before; refused: can never be; failed: retried)."}, []string{"outcome"})),
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
		panic("expert: metrics: " + err.Error())
	}
	return c
}
