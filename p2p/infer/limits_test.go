package infer

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// newHost returns a loopback host connected to server.
func newHost(t *testing.T, server host.Host) host.Host {
	t.Helper()
	h := p2ptest.Host(t)
	p2ptest.Connect(t, h, server)
	return h
}

// newProductionHost is a provider host as p2p.New builds it, with the
// production resource manager and its tenzro service limits.
func newProductionHost(t *testing.T) host.Host {
	t.Helper()
	cfg := p2p.DefaultConfig()
	cfg.Network = "test"
	cfg.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	cfg.KeyFile = filepath.Join(t.TempDir(), "p2p.key")
	h, err := p2p.New(context.Background(), cfg, p2p.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop(context.Background()) })
	return h.Host()
}

// TestUnknownCallerBudget: an unregistered peer gets no more completions
// than the shared budget allows, while a known peer is not limited.
func TestUnknownCallerBudget(t *testing.T) {
	stranger, server := p2ptest.Pair(t)
	known := newHost(t, server)
	clk := clock.NewMock()
	serve(t, server, ServerConfig{Known: func(p peer.ID) bool { return p == known.ID() }, UnknownRate: 3, Clock: clk}, echoHandler)
	completed, limited := 0, 0
	for range 6 {
		_, _, err := Call(context.Background(), stranger, server.ID(), validRequest(), ClientConfig{}, nil)
		var ef *ErrorFrame
		switch {
		case err == nil:
			completed++
		case errors.As(err, &ef) && ef.Status == 429 && ef.Code == terms.CodeRateLimited && ef.RetryAfterMs > 0:
			limited++
		default:
			t.Fatalf("unknown caller: %v", err)
		}
	}
	if completed != 3 || limited != 3 {
		t.Fatalf("unknown caller: %d completed, %d limited; want 3 and 3", completed, limited)
	}
	for i := range 6 {
		if _, _, err := Call(context.Background(), known, server.ID(), validRequest(), ClientConfig{}, nil); err != nil {
			t.Fatalf("known caller, call %d: %v", i, err)
		}
	}
	clk.Add(20 * time.Second) // one token at 3 per minute
	if _, _, err := Call(context.Background(), stranger, server.ID(), validRequest(), ClientConfig{}, nil); err != nil {
		t.Fatalf("unknown caller after the refill: %v", err)
	}
}

// bigTokens is a handler streaming 16 token frames of 64 KiB (more than a
// stream's flow-control window), counting the calls cut by a stalled write.
func bigTokens(started, stalled *atomic.Int32) Handler {
	text := strings.Repeat("x", 64<<10)
	return func(ctx context.Context, _ *Request, _ peer.ID, send func(*TokenFrame) error) (*FinalFrame, error) {
		started.Add(1)
		for range 16 {
			if err := send(&TokenFrame{Text: text}); err != nil {
				if errors.Is(context.Cause(ctx), ErrWriteStalled) {
					stalled.Add(1)
				}
				return nil, err
			}
		}
		return &FinalFrame{FinishReason: "length"}, nil
	}
}

// openRaw opens n streams from c to server and writes a request on each,
// never reading; the streams are reset at cleanup.
func openRaw(t *testing.T, c host.Host, server peer.ID, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range n {
		s, err := c.NewStream(ctx, server, ProtocolID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Reset() })
		b, _ := cborx.Marshal(validRequest())
		if err := p2p.WriteFrame(s, b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNeverReadingStreamsFreeTheirSlots: 16 streams that never read hold
// every slot only until their writes stall; the slots then free and a known
// peer's call is served in full.
func TestNeverReadingStreamsFreeTheirSlots(t *testing.T) {
	attacker, server := p2ptest.Pair(t)
	buyer := newHost(t, server)
	var started, stalled atomic.Int32
	serve(t, server, ServerConfig{MaxConcurrent: 4, MaxPerPeer: 32, MaxQueue: 16, QueueTimeout: 10 * time.Second,
		WriteStallTimeout: 500 * time.Millisecond}, bigTokens(&started, &stalled))
	openRaw(t, attacker, server.ID(), 16)
	for started.Load() < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	var text int
	final, _, err := Call(context.Background(), buyer, server.ID(), validRequest(), ClientConfig{}, func(tf *TokenFrame) error {
		text += len(tf.Text)
		return nil
	})
	if err != nil || final == nil || text != 16*64<<10 {
		t.Fatalf("known peer's call: final %v, %d bytes of text, err %v", final, text, err)
	}
	// The four that held the slots all stall; a generous bound only
	// against a hang.
	for deadline := time.Now().Add(10 * time.Second); stalled.Load() < 4; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls cut by a stalled write, want at least the 4 that held the slots", stalled.Load())
		}
	}
}

// TestFloodFromOnePeer: 500 streams opened at once by one peer leave
// another peer's call served.
func TestFloodFromOnePeer(t *testing.T) {
	server := newProductionHost(t)
	flooder, buyer := newHost(t, server), newHost(t, server)
	var started atomic.Int32
	serve(t, server, ServerConfig{Network: "test", MaxConcurrent: 4, MaxPerPeer: 500, MaxQueue: 8, QueueTimeout: 3 * time.Second},
		func(ctx context.Context, _ *Request, _ peer.ID, _ func(*TokenFrame) error) (*FinalFrame, error) {
			started.Add(1)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			return &FinalFrame{FinishReason: "stop"}, nil
		})
	var busy, refused, served atomic.Int32
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := validRequest()
	req.Network = "test"
	payload, _ := cborx.Marshal(req)
	for range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := flooder.NewStream(ctx, server.ID(), ProtocolID)
			if err != nil {
				refused.Add(1)
				return
			}
			defer s.Reset()
			_ = s.SetDeadline(time.Now().Add(10 * time.Second))
			if err := p2p.WriteFrame(s, payload); err != nil {
				refused.Add(1)
				return
			}
			b, err := p2p.ReadFrame(bufio.NewReader(s), DefaultMaxFrameSize)
			if err != nil {
				refused.Add(1) // reset by the resource manager
				return
			}
			f, err := decodeFrame(b, DefaultMaxFrameSize)
			switch {
			case err != nil:
				t.Errorf("flood answer: %v", err)
			case f.Error != nil && f.Error.Code == terms.CodeBusy:
				busy.Add(1)
			case f.Final != nil:
				served.Add(1)
			}
		}()
	}
	for started.Load() < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	if _, _, err := Call(ctx, buyer, server.ID(), validRequest(), ClientConfig{Network: "test"}, nil); err != nil {
		t.Fatalf("the other peer's call during the flood: %v", err)
	}
	wg.Wait()
	if busy.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("flood: %d busy, %d refused, %d served; the limits were not reached", busy.Load(), refused.Load(), served.Load())
	}
	t.Logf("flood of 500: %d served, %d busy, %d refused by the resource manager", served.Load(), busy.Load(), refused.Load())
}

// TestLeavingWhileQueuedFreesThePlace: a request whose client resets the
// stream while it waits for a slot leaves the queue at once, so it does not
// keep a later request out of a full queue.
func TestLeavingWhileQueuedFreesThePlace(t *testing.T) {
	holder, server := p2ptest.Pair(t)
	other := newHost(t, server)
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	var releaseOnce sync.Once
	serve(t, server, ServerConfig{MaxConcurrent: 1, MaxQueue: 1, QueueTimeout: 10 * time.Second},
		func(ctx context.Context, _ *Request, _ peer.ID, _ func(*TokenFrame) error) (*FinalFrame, error) {
			started <- struct{}{}
			<-release
			return &FinalFrame{FinishReason: "stop"}, nil
		})
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	first := make(chan error, 1)
	go func() {
		_, _, err := Call(context.Background(), holder, server.ID(), validRequest(), ClientConfig{}, nil)
		first <- err
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() {
		_, _, err := Call(ctx, other, server.ID(), validRequest(), ClientConfig{}, nil)
		queued <- err
	}()
	// The queued call stays queued (no answer) until it is cancelled.
	select {
	case err := <-queued:
		t.Fatalf("queued call answered while the slot is held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := <-queued; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled queued call: %v", err)
	}
	// A later request queues (no answer while the slot is held) instead of
	// finding the queue full. The server learns of the reset
	// asynchronously, so a "queue full" answer right after it is retried;
	// the cancelled request would hold its place for the whole QueueTimeout.
	third := make(chan error, 1)
	for deadline := time.Now().Add(5 * time.Second); ; {
		go func() {
			_, _, err := Call(context.Background(), other, server.ID(), validRequest(), ClientConfig{}, nil)
			third <- err
		}()
		select {
		case err := <-third:
			if time.Now().After(deadline) {
				t.Fatalf("the queue still holds the cancelled request: %v", err)
			}
			wantErrorFrame(t, err, 429, terms.CodeBusy)
			time.Sleep(20 * time.Millisecond)
			continue
		case <-time.After(200 * time.Millisecond):
		}
		break
	}
	releaseOnce.Do(func() { close(release) })
	if err := <-first; err != nil {
		t.Fatalf("holder: %v", err)
	}
	if err := <-third; err != nil {
		t.Fatalf("request queued after the cancelled one: %v", err)
	}
}
