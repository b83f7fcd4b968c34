package infer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// stopHandler streams tokens until its context ends; when the client
// stopped the call it answers a final frame counting what it generated.
func stopHandler(sent *atomic.Int64, stopped chan<- bool) Handler {
	return func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		for {
			if err := send(&TokenFrame{Text: "tok", TokenIDs: []int{7}}); err != nil {
				break
			}
			sent.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
		stopped <- Stopped(ctx)
		if !Stopped(ctx) {
			return nil, ctx.Err()
		}
		return &FinalFrame{FinishReason: "stopped", CompletionTokens: int(sent.Load())}, nil
	}
}

// TestStopKeepsTheFinalFrame: a token callback returning ErrStop
// half-closes the stream; the handler sees Stopped and its partial final
// frame reaches Call, which counts every byte read.
func TestStopKeepsTheFinalFrame(t *testing.T) {
	client, server := p2ptest.Pair(t)
	var sent atomic.Int64
	stopped := make(chan bool, 1)
	serve(t, server, ServerConfig{}, stopHandler(&sent, stopped))
	delivered := 0
	final, st, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{StopGrace: 5 * time.Second}, func(*TokenFrame) error {
		delivered++
		if delivered == 3 {
			return fmt.Errorf("buyer left: %w", ErrStop)
		}
		return nil
	})
	if !errors.Is(err, ErrStop) || final == nil {
		t.Fatalf("final %v, err %v; want the final frame and ErrStop", final, err)
	}
	if !<-stopped {
		t.Fatal("handler's context not Stopped")
	}
	if delivered != 3 {
		t.Fatalf("%d tokens delivered, want 3 (none after the stop)", delivered)
	}
	n := sent.Load()
	if final.CompletionTokens != int(n) || n < 3 {
		t.Fatalf("final counts %d tokens, handler sent %d", final.CompletionTokens, n)
	}
	want := n*encodedLen(t, &Frame{Token: &TokenFrame{Text: "tok", TokenIDs: []int{7}}}) + encodedLen(t, &Frame{Final: final})
	if st.BytesReceived != want {
		t.Fatalf("%d bytes received, want %d (every frame, also after the stop)", st.BytesReceived, want)
	}
}

// TestStopWithoutAnswer: a provider that does not answer within StopGrace
// leaves Call with ErrStop and no final frame; one that answers without a
// final frame sends a 499.
func TestStopWithoutAnswer(t *testing.T) {
	client, server := p2ptest.Pair(t)
	release := make(chan struct{})
	serve(t, server, ServerConfig{}, func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		if err := send(&TokenFrame{Text: "a"}); err != nil {
			return nil, err
		}
		<-ctx.Done()
		if Stopped(ctx) {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		return nil, ctx.Err()
	})
	stop := func(*TokenFrame) error { return ErrStop }
	final, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{StopGrace: 100 * time.Millisecond}, stop)
	close(release)
	if !errors.Is(err, ErrStop) || final != nil || errors.As(err, new(*ErrorFrame)) {
		t.Fatalf("final %v, err %v; want ErrStop alone", final, err)
	}
	// Released at once: the handler returns no final, so the server
	// answers 499 stopped.
	final, _, err = Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{StopGrace: 5 * time.Second}, stop)
	if !errors.Is(err, ErrStop) || final != nil {
		t.Fatalf("final %v, err %v; want ErrStop", final, err)
	}
	wantErrorFrame(t, err, 499, terms.CodeStopped)
}

// TestResetIsNotStop: cancelling Call resets the stream; the handler's
// context ends without Stopped and nothing more is written.
func TestResetIsNotStop(t *testing.T) {
	client, server := p2ptest.Pair(t)
	var sent atomic.Int64
	stopped := make(chan bool, 1)
	serve(t, server, ServerConfig{}, stopHandler(&sent, stopped))
	ctx, cancel := context.WithCancel(context.Background())
	_, _, err := Call(ctx, client, server.ID(), validRequest(), ClientConfig{}, func(*TokenFrame) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrStop) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	select {
	case s := <-stopped:
		if s {
			t.Fatal("a reset reported as Stopped")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handler not cancelled by the reset")
	}
}
