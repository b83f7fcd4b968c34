package payment

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// TestSinkPanicResetsStream: a sink that panics on the first delivery
// costs that delivery its stream (reset, no ack) and counts one panic of
// the protocol; the server keeps serving and the next delivery is acked.
func TestSinkPanicResetsStream(t *testing.T) {
	client, server := newPair(t)
	var first atomic.Bool
	first.Store(true)
	sink := newSink(func(context.Context, *receipt.PaymentRecord) error {
		if first.CompareAndSwap(true, false) {
			panic("sink bug")
		}
		return nil
	})
	reg := prometheus.NewRegistry()
	serve(t, server, ServerConfig{Registerer: reg}, sink)
	recs := records(t, 2, 100)

	if _, err := Deliver(t.Context(), client, testNetwork, server.ID(), recs[:1]); err == nil {
		t.Fatal("the delivery whose sink panicked was acked")
	}
	results, err := Deliver(t.Context(), client, testNetwork, server.ID(), recs[1:])
	if err != nil || len(results) != 1 || !results[0].OK() {
		t.Fatalf("delivery after the panic: %+v %v", results, err)
	}
	if n := panicsOf(t, reg, string(ProtocolID)); n != 1 {
		t.Fatalf("panics counted %v, want 1", n)
	}
}

// panicsOf reads tenzro_p2p_stream_handler_panics_total of proto from reg.
func panicsOf(t *testing.T, reg *prometheus.Registry, proto string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "tenzro_p2p_stream_handler_panics_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "protocol" && l.GetValue() == proto {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
