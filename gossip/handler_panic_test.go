package gossip

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

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
	if n := p2ptest.Counter(t, reg, "tenzro_gossip_handler_panics_total", "topic", TopicName("test", KindAnnounce)); n != 1 {
		t.Fatalf("handler panics counted %v, want 1", n)
	}
}
