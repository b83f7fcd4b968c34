package p2p

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

// TestStreamServerLifecycle: Start registers the handler once; Stop
// cancels the exchange in progress, waits for it, removes the handler
// (a new stream is refused) and is idempotent; Start after Stop fails.
func TestStreamServerLifecycle(t *testing.T) {
	const proto = "/tenzro/test-lifecycle/1.0.0"
	srvHost, client := p2ptest.MockPair(t)
	s := NewStreamServer(srvHost, proto, NewPeerLimits(1, 4, "exchanges"))
	entered, left := make(chan struct{}), make(chan error, 1)
	handle := func(st network.Stream) {
		release, err := s.Admit(st.Conn().RemotePeer())
		if err != nil {
			_ = st.Reset()
			return
		}
		defer release()
		close(entered)
		<-s.Context().Done()
		left <- s.Context().Err()
		_ = st.Reset()
	}
	if err := s.Start(handle); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(srvHost.Mux().Protocols(), proto) {
		t.Fatal("Start registered no handler")
	}
	if err := s.Start(handle); !errors.Is(err, ErrServerStarted) {
		t.Fatalf("second Start: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := client.NewStream(ctx, srvHost.ID(), proto)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	<-entered
	if s.Active() != 1 {
		t.Fatalf("active %d during the exchange", s.Active())
	}
	s.Stop()
	select {
	case err := <-left:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("exchange context after Stop: %v", err)
		}
	default:
		t.Fatal("Stop returned before the exchange in progress ended")
	}
	if s.Active() != 0 {
		t.Fatalf("active %d after Stop", s.Active())
	}
	for _, p := range srvHost.Mux().Protocols() {
		if p == proto {
			t.Fatal("the handler is still registered after Stop")
		}
	}
	s.Stop()
	if err := s.Start(handle); !errors.Is(err, ErrServerStarted) {
		t.Fatalf("Start after Stop: %v", err)
	}
}
