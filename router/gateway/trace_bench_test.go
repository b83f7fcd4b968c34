package gateway

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// BenchmarkRouteTracing is the gateway's own cost of one routed request
// (quote, rank, race, drain, receipt verification, billing in the real
// store) over an instant scripted provider, with tracing off (no tracer:
// otel's no-op) and on (the SDK, every span sampled, batched to an exporter
// that drops them). Run with:
//
//	go test -run '^$' -bench RouteTracing -benchmem ./router/gateway/
func BenchmarkRouteTracing(b *testing.B) {
	instant := func(int, *infer.Request) script { return script{tokens: []string{"Hello", " there"}} }
	for _, on := range []bool{false, true} {
		name := "tracing=off"
		if on {
			name = "tracing=on"
		}
		b.Run(name, func(b *testing.B) {
			st := openStore(b)
			if err := st.st.Credit("alice", 1<<50); err != nil {
				b.Fatal(err)
			}
			cfg := testConfig()
			cfg.BuyerDefaults.RatePerMinute = 6_000_000
			m := newMarket(b, st, 2, cfg, instant)
			withTracer(b, m, cfg, nil)
			if on {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				withTracer(b, m, cfg, tp)
			}
			ctx, discard := context.Background(), func(Delta) error { return nil }
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%1000 == 0 { // providers fall down 6 s after their last heartbeat
					m.beat()
				}
				if _, err := m.gw.Route(ctx, request(), discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
