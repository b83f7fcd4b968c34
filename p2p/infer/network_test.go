package infer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestNetworksNeverExchange: a provider of one network refuses a gateway of
// another at the request frame, before its handler runs; the same pair on
// one network is served.
func TestNetworksNeverExchange(t *testing.T) {
	client, server := p2ptest.Pair(t)
	var served atomic.Int32
	serve(t, server, ServerConfig{Network: "alpha"}, func(context.Context, *Request, peer.ID, func(*TokenFrame) error) (*FinalFrame, error) {
		served.Add(1)
		return &FinalFrame{FinishReason: "stop"}, nil
	})
	for _, net := range []string{"beta", ""} {
		_, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{Network: net}, nil)
		ef := wantErrorFrame(t, err, 421, terms.CodeWrongNetwork)
		if ef.Retryable {
			t.Fatalf("wrong network answered retryable: %+v", ef)
		}
	}
	// The check comes before validation: an invalid request of another
	// network is refused for its network, not its contents.
	bad := validRequest()
	bad.Network = "beta"
	bad.Nonce = nil
	b, err := cborx.Marshal(bad)
	if err != nil {
		t.Fatal(err)
	}
	if f := rawExchange(t, client, server.ID(), b); f.Error == nil || f.Error.Code != terms.CodeWrongNetwork {
		t.Fatalf("invalid request of another network answered %+v", f)
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("handler ran %d times for another network", n)
	}
	if _, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{Network: "alpha"}, nil); err != nil {
		t.Fatalf("same network: %v", err)
	}
	if served.Load() != 1 {
		t.Fatal("same-network call not served")
	}
	if !errors.Is(p2p.CheckNetwork("alpha", "beta"), p2p.ErrWrongNetwork) {
		t.Fatal("CheckNetwork accepts another network")
	}
}
