package infer

import (
	"context"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/tenzrod/tenzrod/p2p"
)

// WarmIdle is how long a warm stream waits for its call. A provider's
// server gives a stream ServerConfig.RequestTimeout (default 10 s) to
// deliver its request from the moment it was negotiated; a warm stream is
// dropped well before that, so it is never cut while in use.
const WarmIdle = 4 * time.Second

// refillDelay is how long after a call its provider's next stream is
// opened: the gateway is still billing and answering the call until then.
const refillDelay = 5 * time.Millisecond

// warmOpenTimeout bounds opening one warm stream in the background.
const warmOpenTimeout = 5 * time.Second

// Warm keeps, per provider, one stream opened and negotiated ahead of the
// next call (ClientConfig.Warm), so a call to a provider it has just
// called skips opening the stream, the protocol negotiation and the
// provider's stream accept: on loopback those are about a third of a
// call's round trip. A stream is refilled in the background after each
// call that was answered, and one idle longer than WarmIdle is dropped.
// It is safe for concurrent use; the zero value is not usable (NewWarm).
type Warm struct {
	h    host.Host
	idle time.Duration
	now  func() time.Time

	mu      sync.Mutex
	closed  bool
	streams map[peer.ID]warmStream
	opening map[peer.ID]bool
	wg      sync.WaitGroup
}

type warmStream struct {
	s  network.Stream
	at time.Time
}

// NewWarm returns a pool that opens streams from h.
func NewWarm(h host.Host) *Warm {
	return &Warm{h: h, idle: WarmIdle, now: time.Now, streams: map[peer.ID]warmStream{}, opening: map[peer.ID]bool{}}
}

// take returns p's warm stream, if one is fresh enough; the caller owns it.
func (w *Warm) take(p peer.ID) network.Stream {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	ws, ok := w.streams[p]
	delete(w.streams, p)
	w.mu.Unlock()
	if !ok {
		return nil
	}
	if w.now().Sub(ws.at) >= w.idle {
		_ = ws.s.Reset()
		return nil
	}
	return ws.s
}

// refill opens a stream to p in the background unless one is held or
// being opened.
func (w *Warm) refill(p peer.ID) {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.closed || w.opening[p] {
		w.mu.Unlock()
		return
	}
	if ws, ok := w.streams[p]; ok && w.now().Sub(ws.at) < w.idle/2 {
		w.mu.Unlock()
		return
	}
	w.opening[p] = true
	w.wg.Add(1)
	w.mu.Unlock()
	go func() {
		defer w.wg.Done()
		// After the call's answer has gone on to the buyer: on a busy
		// machine opening the stream would compete with it for the CPU.
		time.Sleep(refillDelay)
		s := w.open(p)
		w.mu.Lock()
		delete(w.opening, p)
		var old network.Stream
		if s != nil && !w.closed {
			if ws, ok := w.streams[p]; ok {
				old = ws.s
			}
			w.streams[p] = warmStream{s: s, at: w.now()}
			s = nil
		}
		w.mu.Unlock()
		for _, x := range []network.Stream{old, s} {
			if x != nil {
				_ = x.Reset()
			}
		}
	}()
}

// open opens a stream to p and sends the protocol negotiation at once
// (an empty write flushes it), so the provider's handler is waiting for
// the request when the call comes. Nil when it cannot.
func (w *Warm) open(p peer.ID) network.Stream {
	ctx, cancel := context.WithTimeout(context.Background(), warmOpenTimeout)
	defer cancel()
	s, err := w.h.NewStream(p2p.AllowRelayed(network.WithNoDial(ctx, "warm streams only reuse connections"), "tenzro inference"), p, ProtocolID)
	if err != nil {
		return nil
	}
	if err := s.Scope().SetService(ServiceName); err != nil {
		_ = s.Reset()
		return nil
	}
	if _, err := s.Write(nil); err != nil {
		_ = s.Reset()
		return nil
	}
	return s
}

// Close resets the idle streams, waits for the ones being opened and
// stops refilling.
func (w *Warm) Close() {
	w.mu.Lock()
	w.closed = true
	idle := w.streams
	w.streams = map[peer.ID]warmStream{}
	w.mu.Unlock()
	for _, ws := range idle {
		_ = ws.s.Reset()
	}
	w.wg.Wait()
}

// Idle is how many warm streams are held (for tests and metrics).
func (w *Warm) Idle() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.streams)
}
