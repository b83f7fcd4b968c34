package infer

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

// answerOnce answers one token and a final frame, counting its calls;
// while hold is non-nil each call waits for it first.
func answerOnce(calls *atomic.Int32, hold chan struct{}) Handler {
	return func(ctx context.Context, req *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		calls.Add(1)
		if hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if err := send(&TokenFrame{Text: "hi", TokenIDs: []int{7}}); err != nil {
			return nil, err
		}
		return &FinalFrame{FinishReason: "stop", CompletionTokens: 1}, nil
	}
}

// waitIdle waits until w holds n warm streams.
func waitIdle(t *testing.T, w *Warm, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.Idle() != n {
		if time.Now().After(deadline) {
			t.Fatalf("warm streams: %d, want %d", w.Idle(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWarmStreamCarriesTheNextCall: an answered call leaves one stream
// open to its provider; the next call is sent on it (the pool is empty
// while that call runs, since refilling follows only an answered call),
// with the same answer and byte counts as on a stream of its own.
func TestWarmStreamCarriesTheNextCall(t *testing.T) {
	client, server := p2ptest.Pair(t)
	var calls atomic.Int32
	hold := make(chan struct{})
	var holding atomic.Bool
	serve(t, server, ServerConfig{}, func(ctx context.Context, req *Request, p peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		if holding.Load() {
			calls.Add(1)
			<-hold
			calls.Add(-1)
		}
		return answerOnce(&calls, nil)(ctx, req, p, send)
	})
	w := NewWarm(client)
	t.Cleanup(w.Close)
	req := validRequest()
	call := func() (*FinalFrame, WireStats, error) {
		return Call(context.Background(), client, server.ID(), req, ClientConfig{Warm: w}, nil)
	}
	check := func(f *FinalFrame, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if f.FinishReason != "stop" || f.CompletionTokens != 1 {
			t.Fatalf("final frame %+v", f)
		}
	}
	f, cold, err := call()
	check(f, err)
	waitIdle(t, w, 1)

	holding.Store(true)
	type result struct {
		f   *FinalFrame
		st  WireStats
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, st, err := call()
		done <- result{f, st, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() != 2 { // the first call's 1, and this one held
		if time.Now().After(deadline) {
			t.Fatal("the second call never reached the handler")
		}
		time.Sleep(time.Millisecond)
	}
	if n := w.Idle(); n != 0 {
		t.Fatalf("%d warm streams while the only one carries a call", n)
	}
	close(hold)
	r := <-done
	check(r.f, r.err)
	if r.st.BytesSent != cold.BytesSent || r.st.BytesReceived != cold.BytesReceived {
		t.Fatalf("warm call wire stats %d/%d bytes, a cold one %d/%d", r.st.BytesSent, r.st.BytesReceived, cold.BytesSent, cold.BytesReceived)
	}
	waitIdle(t, w, 1) // refilled after the answered call
}

// TestWarmStreamOfARestartedServerIsReplaced: a warm stream the provider
// dropped (its handler was unregistered, which resets streams still
// waiting for a request, and registered again) costs the call nothing:
// it goes on a new stream and is answered.
func TestWarmStreamOfARestartedServerIsReplaced(t *testing.T) {
	client, server := p2ptest.Pair(t)
	var calls atomic.Int32
	// A request timeout far beyond the test: unregister must not wait
	// for the idle warm stream's request.
	cfg := ServerConfig{RequestTimeout: time.Hour}
	unregister := Register(server, cfg, answerOnce(&calls, nil), nil)
	w := NewWarm(client)
	t.Cleanup(w.Close)
	req := validRequest()
	if _, _, err := Call(context.Background(), client, server.ID(), req, ClientConfig{Warm: w}, nil); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w, 1)
	gone := make(chan struct{})
	go func() { unregister(); close(gone) }()
	waitDone(t, gone, 30*time.Second, "unregister with a warm stream waiting")
	serve(t, server, cfg, answerOnce(&calls, nil))
	f, _, err := Call(context.Background(), client, server.ID(), req, ClientConfig{Warm: w}, nil)
	if err != nil {
		t.Fatalf("call after the provider dropped its warm stream: %v", err)
	}
	if f.FinishReason != "stop" || calls.Load() != 2 {
		t.Fatalf("final %+v after %d handler calls, want stop after 2", f, calls.Load())
	}
}

// TestWarmStreamExpires: a stream idle for WarmIdle is not used.
func TestWarmStreamExpires(t *testing.T) {
	client, server := p2ptest.Pair(t)
	var calls atomic.Int32
	serve(t, server, ServerConfig{}, answerOnce(&calls, nil))
	w := NewWarm(client)
	t.Cleanup(w.Close)
	var skew atomic.Int64
	w.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	req := validRequest()
	if _, _, err := Call(context.Background(), client, server.ID(), req, ClientConfig{Warm: w}, nil); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w, 1)
	skew.Store(int64(WarmIdle))
	if s := w.take(server.ID()); s != nil {
		t.Fatal("a warm stream idle for WarmIdle was handed out")
	}
	if w.Idle() != 0 {
		t.Fatal("the expired stream is still held")
	}
	var nilWarm *Warm
	if nilWarm.take(server.ID()) != nil {
		t.Fatal("a nil pool handed out a stream")
	}
	nilWarm.refill(server.ID()) // a no-op, not a panic
}
