package gossip

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gathered returns the value of the counter name with label topic in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name, topic string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "topic" && l.GetValue() == topic {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestHandlerPanicCountedAndServing: the announcement handler panics on the
// first accepted message. The node keeps its subscription loop: the second
// announcement reaches the handler, and the panic is counted once.
func TestHandlerPanicCountedAndServing(t *testing.T) {
	now := time.Now()
	prov := newTestProvider(t, now)
	h := newNetHost(t, prov.peerKey)
	reg := prometheus.NewRegistry()
	ctx := context.Background()
	s, err := New(ctx, Config{Network: "test", Window: DefaultWindow}, Deps{Host: h, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan uint64, 2)
	calls := 0
	s.OnAnnouncement(func(a *VerifiedAnnouncement) {
		calls++ // one subscription goroutine delivers the topic: no race
		if calls == 1 {
			panic("handler bug")
		}
		got <- a.Seq
	})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(ctx) })

	for range 2 {
		if err := s.Publish(ctx, prov.sess, KindAnnounce, prov.announcement(time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case seq := <-got:
		if seq != prov.seq {
			t.Fatalf("handler got seq %d, want the second announcement's %d", seq, prov.seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second announcement never reached the handler: the loop died with the panic")
	}
	if n := gathered(t, reg, "tenzro_gossip_handler_panics_total", TopicName("test", KindAnnounce)); n != 1 {
		t.Fatalf("handler panics counted %v, want 1", n)
	}
}
