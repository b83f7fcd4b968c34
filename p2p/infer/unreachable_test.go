package infer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

// TestClosedProviderIsUnreachable: a call to a provider whose host has
// closed (the in-process SIGKILL) fails with ErrUnreachable, not a first
// token timeout, with or without a warm stream held for it; a call the
// caller cancelled is not blamed on the provider.
func TestClosedProviderIsUnreachable(t *testing.T) {
	client, server := p2ptest.Pair(t)
	serve(t, server, ServerConfig{}, func(context.Context, *Request, peer.ID, func(*TokenFrame) error) (*FinalFrame, error) {
		return &FinalFrame{}, nil
	})
	warm := NewWarm(client)
	t.Cleanup(warm.Close)
	cfg := ClientConfig{FirstTokenTimeout: time.Hour, Warm: warm}
	ctx := context.Background()
	if _, _, err := Call(ctx, client, server.ID(), validRequest(), cfg, func(*TokenFrame) error { return nil }); err != nil {
		t.Fatal(err) // answered: the pool now holds a stream to server
	}
	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []ClientConfig{cfg, {FirstTokenTimeout: time.Hour}} {
		_, _, err := Call(ctx, client, server.ID(), validRequest(), c, func(*TokenFrame) error { return nil })
		if !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrFirstTokenTimeout) {
			t.Fatalf("call to a closed provider (warm %v): %v, want ErrUnreachable", c.Warm != nil, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := Call(cancelled, client, server.ID(), validRequest(), ClientConfig{}, func(*TokenFrame) error { return nil }); errors.Is(err, ErrUnreachable) {
		t.Fatalf("a cancelled call blames the provider: %v", err)
	}
}
