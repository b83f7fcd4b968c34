package p2p

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

// TestPanicGuard: a guarded handler that panics resets its stream and
// counts one panic of its protocol; the next stream is served. Two guards
// on one registry share the series.
func TestPanicGuard(t *testing.T) {
	const proto = "/tenzro/test-panic/1.0.0"
	srv, client := p2ptest.MockPair(t)
	reg := prometheus.NewRegistry()
	var calls atomic.Int32
	srv.SetStreamHandler(proto, NewPanicGuard(reg, nil).Wrap(proto, func(s network.Stream) {
		if calls.Add(1) == 1 {
			panic("handler bug")
		}
		_, _ = s.Write([]byte("ok"))
		_ = s.Close()
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	read := func() ([]byte, error) {
		// The reset may come before the protocol's negotiation returns.
		st, err := client.NewStream(ctx, srv.ID(), proto)
		if err != nil {
			return nil, err
		}
		defer func() { _ = st.Reset() }()
		_ = st.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := st.Write([]byte{1}); err != nil {
			return nil, err
		}
		return io.ReadAll(st)
	}
	if b, err := read(); err == nil {
		t.Fatalf("the panicking handler's stream ended cleanly with %q, want a reset", b)
	}
	if b, err := read(); err != nil || string(b) != "ok" {
		t.Fatalf("after the panic: %q %v, want ok", b, err)
	}
	NewPanicGuard(reg, nil) // a second guard reuses the registered series
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []*dto.Metric
	for _, mf := range mfs {
		if mf.GetName() == "tenzro_p2p_stream_handler_panics_total" {
			got = mf.GetMetric()
		}
	}
	if len(got) != 1 || got[0].GetCounter().GetValue() != 1 || got[0].GetLabel()[0].GetValue() != proto {
		t.Fatalf("panic series %v, want one of %s at 1", got, proto)
	}
}
