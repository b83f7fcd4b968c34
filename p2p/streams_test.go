package p2p

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

func TestCheckNetwork(t *testing.T) {
	if err := CheckNetwork("devnet", "devnet"); err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"", "testnet", "devnet "} {
		err := CheckNetwork("devnet", other)
		if !errors.Is(err, ErrWrongNetwork) {
			t.Fatalf("CheckNetwork(devnet, %q) = %v, want ErrWrongNetwork", other, err)
		}
	}
}

// TestServicePeerStreamLimit: one peer can attach at most
// servicePeerInbound inbound streams to a tenzro service at once; the
// resource manager refuses the rest.
func TestServicePeerStreamLimit(t *testing.T) {
	srv := newTestHost(t, testConfig(t, false, nil))
	cli := newTestHost(t, testConfig(t, false, nil))
	const proto = "/tenzro/test-limit/1.0.0"
	var attached, refused atomic.Int32
	release := make(chan struct{})
	srv.Host().SetStreamHandler(proto, func(s network.Stream) {
		if err := s.Scope().SetService(ServiceInfer); err != nil {
			refused.Add(1)
			_ = s.Reset()
			return
		}
		attached.Add(1)
		<-release
		_ = s.Reset()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cli.Host().Connect(ctx, peer.AddrInfo{ID: srv.ID(), Addrs: srv.Host().Addrs()}); err != nil {
		t.Fatal(err)
	}
	const open = servicePeerInbound + 16
	streams := make([]network.Stream, 0, open)
	defer func() {
		for _, s := range streams {
			_ = s.Reset()
		}
	}()
	// A refused stream is reset: by the handler when the service refuses
	// it, or by the resource manager before any handler runs. The client
	// sees either as a failed read; an attached stream blocks until release.
	var reset atomic.Int32
	for range open {
		s, err := cli.Host().NewStream(ctx, srv.ID(), proto)
		if err != nil {
			reset.Add(1) // refused at open
			continue
		}
		streams = append(streams, s)
		if _, err := s.Write([]byte{0}); err != nil { // make the stream reach the handler
			reset.Add(1)
			continue
		}
		go func() {
			if _, err := s.Read(make([]byte, 1)); err != nil {
				select {
				case <-release:
				default:
					reset.Add(1)
				}
			}
		}()
	}
	for attached.Load() < servicePeerInbound || attached.Load()+reset.Load() < open {
		if ctx.Err() != nil {
			t.Fatalf("%d attached, %d reset (%d by the handler) of %d", attached.Load(), reset.Load(), refused.Load(), open)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := attached.Load(); got != servicePeerInbound {
		t.Fatalf("%d attached, want %d", got, servicePeerInbound)
	}
	close(release)
}

func FuzzCheckNetwork(f *testing.F) {
	f.Add("devnet", "devnet")
	f.Add("devnet", "")
	f.Add("a", "A")
	f.Fuzz(func(t *testing.T, local, requested string) {
		err := CheckNetwork(local, requested)
		if (err == nil) != (local == requested) {
			t.Fatalf("CheckNetwork(%q, %q) = %v", local, requested, err)
		}
		if err != nil && !errors.Is(err, ErrWrongNetwork) {
			t.Fatalf("error %v does not wrap ErrWrongNetwork", err)
		}
	})
}
