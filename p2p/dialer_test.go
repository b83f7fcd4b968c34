package p2p

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
)

// TestDialerFindsAddressesInTheDHT: a caller whose peerstore lost every
// address of a peer (and its connection) cannot open a stream with the
// plain host, "no addresses", but can with Dialer, which asks the DHT.
func TestDialerFindsAddressesInTheDHT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	boot := newTestHost(t, testConfig(t, true, nil))
	if err := boot.Start(ctx); err != nil {
		t.Fatal(err)
	}
	provider := newTestHost(t, testConfig(t, true, boot.Addrs()))
	caller := newTestHost(t, testConfig(t, false, boot.Addrs()))
	for _, h := range []*Host{provider, caller} {
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const proto = protocol.ID("/tenzro/test-echo/1.0.0")
	provider.Host().SetStreamHandler(proto, func(s network.Stream) { _ = s.Close() })
	for boot.DHT().RoutingTable().Find(provider.ID()) == "" {
		select {
		case <-ctx.Done():
			t.Fatal("the provider never reached the bootstrap peer's routing table")
		case <-time.After(20 * time.Millisecond):
		}
	}
	// The hard case: the caller's routing table still holds the provider
	// once the peerstore has forgotten its addresses (findTwice).
	for caller.DHT().RoutingTable().Find(provider.ID()) == "" {
		select {
		case <-ctx.Done():
			t.Fatal("the caller's DHT never learned the provider")
		case <-time.After(20 * time.Millisecond):
		}
	}
	forget := func() {
		_ = caller.Host().Network().ClosePeer(provider.ID())
		caller.Host().Peerstore().ClearAddrs(provider.ID())
	}
	// The provider's DHT may dial the caller again at any moment (a
	// refresh or a query), and a stream then rides that new connection; so
	// the plain host is asked a few times and must fail with "no
	// addresses" at least once, and never with another error.
	sawNoAddrs := false
	for i := 0; i < 5 && !sawNoAddrs; i++ {
		forget()
		s, err := caller.Host().NewStream(ctx, provider.ID(), proto)
		switch {
		case errors.Is(err, swarm.ErrNoAddresses):
			sawNoAddrs = true
		case err == nil:
			_ = s.Close()
			t.Logf("attempt %d: the provider reconnected first; asking again", i)
		default:
			t.Fatalf("plain host without addresses: %v, want %v", err, swarm.ErrNoAddresses)
		}
	}
	if !sawNoAddrs {
		t.Fatalf("plain host kept opening streams after its addresses were cleared; want %v", swarm.ErrNoAddresses)
	}
	forget()
	s, err := caller.Dialer().NewStream(ctx, provider.ID(), proto)
	if err != nil {
		t.Fatalf("dialer: %v", err)
	}
	_ = s.Close()
}
