package infer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func TestRoundTrip(t *testing.T) {
	client, server := p2ptest.Pair(t)
	final := &FinalFrame{FinishReason: "stop", PromptTokens: 9, CompletionTokens: 5, Model: "tiny-q8", Receipt: []byte("receipt"), Commitment: []byte{1, 2}}
	type seen struct {
		req  *Request
		peer peer.ID
		sent []*TokenFrame
	}
	seenc := make(chan seen, 1)
	serve(t, server, ServerConfig{}, func(ctx context.Context, req *Request, p peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		sv := seen{req: req, peer: p}
		defer func() { seenc <- sv }()
		for i := range 5 {
			tf := &TokenFrame{Text: fmt.Sprintf("tok%d ", i), TokenIDs: []int{i, i + 100}, TopK: [][]inference.LogProb{{{ID: i, LogProb: -0.5}}, {{ID: i + 100, LogProb: -1.25}}}}
			if err := send(tf); err != nil {
				return nil, err
			}
			sv.sent = append(sv.sent, tf)
		}
		return final, nil
	})

	req := validRequest()
	var got []*TokenFrame
	start := time.Now()
	fin, st, err := Call(context.Background(), client, server.ID(), req, ClientConfig{FirstTokenTimeout: 5 * time.Second, StallTimeout: 5 * time.Second}, func(tf *TokenFrame) error {
		got = append(got, tf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sv := <-seenc
	sent := sv.sent
	if !reflect.DeepEqual(fin, final) {
		t.Fatalf("final %+v, want %+v", fin, final)
	}
	if !reflect.DeepEqual(got, sent) {
		t.Fatalf("tokens %+v, want %+v", got, sent)
	}
	if sv.peer != client.ID() || !reflect.DeepEqual(sv.req, req) {
		t.Fatalf("handler saw peer %s request %+v", sv.peer, sv.req)
	}

	payload, err := cborx.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	wantRecv := encodedLen(t, &Frame{Final: final})
	for _, tf := range sent {
		wantRecv += encodedLen(t, &Frame{Token: tf})
	}
	if st.BytesSent != frameLen(payload) || st.BytesReceived != wantRecv {
		t.Fatalf("wire stats sent %d received %d, want %d and %d", st.BytesSent, st.BytesReceived, frameLen(payload), wantRecv)
	}
	if st.FirstTokenAt.Before(start) || st.FinishedAt.Before(st.FirstTokenAt) {
		t.Fatalf("times: start %v first %v finished %v", start, st.FirstTokenAt, st.FinishedAt)
	}
}

func TestCancelStopsHandler(t *testing.T) {
	client, server := p2ptest.Pair(t)
	observed := make(chan struct{})
	serve(t, server, ServerConfig{}, tokenThenWait(observed, 10*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, err := Call(ctx, client, server.ID(), validRequest(), ClientConfig{}, func(*TokenFrame) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	waitDone(t, observed, 2*time.Second, "handler ctx cancelled")
}

func TestTokenCallbackErrorStopsHandler(t *testing.T) {
	client, server := p2ptest.Pair(t)
	observed := make(chan struct{})
	serve(t, server, ServerConfig{}, func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		for ctx.Err() == nil {
			_ = send(&TokenFrame{Text: "x"})
			time.Sleep(5 * time.Millisecond)
		}
		close(observed)
		return nil, ctx.Err()
	})
	boom := errors.New("buyer went away")
	_, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, func(*TokenFrame) error { return boom })
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "infer: ") {
		t.Fatalf("error %v, want the callback's", err)
	}
	waitDone(t, observed, 2*time.Second, "handler ctx cancelled")
}

func TestHandlerErrorFrame(t *testing.T) {
	client, server := p2ptest.Pair(t)
	serve(t, server, ServerConfig{}, func(context.Context, *Request, peer.ID, func(*TokenFrame) error) (*FinalFrame, error) {
		return nil, fmt.Errorf("engine: %w", &ErrorFrame{Status: 429, Code: "rate_limited", Message: "slow down", RetryAfterMs: 1500, Retryable: true})
	})
	_, st, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, nil)
	ef := wantErrorFrame(t, err, 429, "rate_limited")
	if ef.RetryAfterMs != 1500 || !ef.Retryable || ef.Message != "slow down" {
		t.Fatalf("error frame %+v", ef)
	}
	if st.BytesReceived != encodedLen(t, &Frame{Error: ef}) || !st.FirstTokenAt.IsZero() {
		t.Fatalf("stats %+v", st)
	}
}

func TestHandlerFailures(t *testing.T) {
	client, server := p2ptest.Pair(t)
	serve(t, server, ServerConfig{MaxDuration: 300 * time.Millisecond}, func(ctx context.Context, req *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		switch req.Model {
		case "internal":
			return nil, errors.New("/secret/path: disk on fire")
		case "nil":
			return nil, nil
		case "bad status":
			return nil, &ErrorFrame{Status: 200, Code: "ok?", Message: "\xff" + strings.Repeat("m", 2*maxMessageLen)}
		case "invalid final":
			return &FinalFrame{CompletionTokens: -1}, nil
		default: // runs over MaxDuration
			<-ctx.Done()
			return nil, ctx.Err()
		}
	})
	for _, tc := range []struct {
		mode   string
		status int
		code   string
	}{
		{"internal", 500, terms.CodeInternal},
		{"nil", 500, terms.CodeInternal},
		{"bad status", 500, "ok?"},
		{"invalid final", 500, terms.CodeInternal},
		{"slow", 504, terms.CodeTimeout},
	} {
		req := validRequest()
		req.Model = tc.mode
		_, _, err := Call(context.Background(), client, server.ID(), req, ClientConfig{}, nil)
		ef := wantErrorFrame(t, err, tc.status, tc.code)
		if strings.Contains(ef.Message, "secret") || len(ef.Message) > maxMessageLen {
			t.Fatalf("%s: message %q", tc.mode, ef.Message[:min(len(ef.Message), 80)])
		}
	}
}

func TestStall(t *testing.T) {
	client, server := p2ptest.Pair(t)
	observed := make(chan struct{})
	serve(t, server, ServerConfig{}, tokenThenWait(observed, 5*time.Second))
	tokens := 0
	start := time.Now()
	_, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{FirstTokenTimeout: 5 * time.Second, StallTimeout: 150 * time.Millisecond}, func(*TokenFrame) error {
		tokens++
		return nil
	})
	if !errors.Is(err, ErrStalled) || tokens != 1 {
		t.Fatalf("error %v after %d tokens, want ErrStalled after 1", err, tokens)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("stall detected after %s", d)
	}
	waitDone(t, observed, 2*time.Second, "handler ctx cancelled")
}

func TestFirstTokenTimeout(t *testing.T) {
	client, server := p2ptest.Pair(t)
	serve(t, server, ServerConfig{}, func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Second):
		}
		return &FinalFrame{}, send(&TokenFrame{Text: "late"})
	})
	start := time.Now()
	_, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{FirstTokenTimeout: 150 * time.Millisecond, StallTimeout: 5 * time.Second}, nil)
	if !errors.Is(err, ErrFirstTokenTimeout) {
		t.Fatalf("error %v, want ErrFirstTokenTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout after %s", d)
	}
}

func TestMaxConcurrent(t *testing.T) {
	client, server := p2ptest.Pair(t)
	started := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	var releaseOnce sync.Once
	serve(t, server, ServerConfig{MaxConcurrent: 1, QueueTimeout: 50 * time.Millisecond}, func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		once.Do(func() { close(started) })
		<-release
		return &FinalFrame{FinishReason: "stop"}, nil
	})
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // runs before the server's cleanup
	first := make(chan error, 1)
	go func() {
		_, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, nil)
		first <- err
	}()
	waitDone(t, started, 5*time.Second, "first request started")
	_, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, nil)
	// A typed busy with a retry hint, so a gateway fails over without
	// counting a failure.
	if ef := wantErrorFrame(t, err, 429, terms.CodeBusy); !ef.Retryable || ef.RetryAfterMs <= 0 {
		t.Fatalf("busy answer not retryable or without a hint: %+v", ef)
	}
	releaseOnce.Do(func() { close(release) })
	if err := <-first; err != nil {
		t.Fatalf("first request: %v", err)
	}
	// The slot is free again.
	if _, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, nil); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestUnregisterCancelsInFlight(t *testing.T) {
	client, server := p2ptest.Pair(t)
	started := make(chan struct{})
	unregister := Register(server, ServerConfig{}, func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}, nil)
	res := make(chan error, 1)
	go func() {
		_, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, nil)
		res <- err
	}()
	waitDone(t, started, 5*time.Second, "request started")
	unregister()
	wantErrorFrame(t, <-res, 503, terms.CodeShuttingDown)
	unregister() // idempotent
	if _, _, err := Call(context.Background(), client, server.ID(), validRequest(), ClientConfig{}, nil); err == nil || errors.As(err, new(*ErrorFrame)) {
		t.Fatalf("call after unregister: %v", err)
	}
}
