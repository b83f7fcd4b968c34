package infer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// WireStats is what crossed the stream: protocol bytes written and read
// (frames with their length prefixes; multistream negotiation excluded), the
// arrival of the first token frame and the end of the call.
type WireStats struct {
	BytesSent, BytesReceived int64
	FirstTokenAt, FinishedAt time.Time
}

// ClientConfig bounds the client side. Zero fields take the defaults.
type ClientConfig struct {
	// MaxFrameSize caps each received frame; default DefaultMaxFrameSize.
	MaxFrameSize int
	// FirstTokenTimeout bounds the wait for the first frame of the answer,
	// measured from the start of Call (stream opening included); 0 = none.
	FirstTokenTimeout time.Duration
	// StallTimeout bounds the gap between two frames after the first; 0 = none.
	StallTimeout time.Duration
}

// inlineWriteLimit is the largest request Call writes on its own
// goroutine; yamux's initial stream window is 256 KiB.
const inlineWriteLimit = 64 << 10

// Call opens a stream to p, sends req, and delivers each TokenFrame to
// onToken in order; it returns the FinalFrame.
//
// Errors: an *ErrorFrame sent by the provider; ErrFirstTokenTimeout and
// ErrStalled; ErrMalformedFrame; ErrNoFinal when the stream ends, breaks or
// is reset before a final frame (wrapping the transport error); ctx's error
// when ctx ends first; an error wrapping ErrInvalidRequest for a request
// Validate refuses; network errors from opening the stream; and the error
// of onToken, which aborts the call. On every failure the stream is reset,
// so the provider stops generating. WireStats are valid on every return.
func Call(ctx context.Context, h host.Host, p peer.ID, req *Request, cfg ClientConfig, onToken func(*TokenFrame) error) (*FinalFrame, WireStats, error) {
	var st WireStats
	if err := req.Validate(); err != nil {
		return nil, st, err
	}
	payload, err := cborx.Marshal(req)
	if err != nil {
		return nil, st, fmt.Errorf("infer: encode request: %w", err)
	}
	if cfg.MaxFrameSize <= 0 {
		cfg.MaxFrameSize = DefaultMaxFrameSize
	}
	if err := ctx.Err(); err != nil {
		return nil, st, fmt.Errorf("infer: %w", err)
	}
	// A first-token timeout while opening the stream aborts NewStream.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wd := &watchdog{onFire: cancel}
	if cfg.FirstTokenTimeout > 0 {
		wd.arm(cfg.FirstTokenTimeout, ErrFirstTokenTimeout)
	}
	defer wd.disarm()
	s, err := h.NewStream(sctx, p, ProtocolID)
	if err != nil {
		if cause := wd.cause(); cause != nil {
			return nil, st, cause
		}
		return nil, st, fmt.Errorf("infer: open stream to %s: %w", p, err)
	}
	if err := s.Scope().SetService(ServiceName); err != nil {
		_ = s.Reset()
		return nil, st, fmt.Errorf("infer: attach stream to service: %w", err)
	}
	wd.setStream(s)
	stopCtx := context.AfterFunc(ctx, func() { wd.fire(fmt.Errorf("infer: %w", context.Cause(ctx))) })
	defer stopCtx()

	cs := &countingStream{s: s}
	wrote := make(chan error, 1)
	if len(payload) <= inlineWriteLimit {
		// Fits the muxer's initial window: the write cannot wait for the
		// provider to read, so it is made here, saving a goroutine hand-off
		// on every call. The watchdog still bounds it (a stuck connection).
		wrote <- p2p.WriteFrame(cs, payload)
	} else {
		go func() { wrote <- p2p.WriteFrame(cs, payload) }()
	}

	final, err := readAnswer(bufio.NewReader(cs), cfg, wd, &st, onToken)
	st.FinishedAt = time.Now()
	stopCtx()
	wd.disarm()
	finishStream(s, wrote, &err)
	st.BytesSent, st.BytesReceived = cs.sent.Load(), cs.received.Load()
	return final, st, err
}

// finishStream closes s after a complete answer (final or error frame) with
// the request fully written, and resets it otherwise; it waits for the
// request writer to return. A failed request write is noted on a cut stream.
func finishStream(s network.Stream, wrote <-chan error, errp *error) {
	err := *errp
	answered := err == nil || errors.As(err, new(*ErrorFrame))
	var werr error
	done := false
	select {
	case werr = <-wrote:
		done = true
	default:
		if err == nil {
			// The provider read the whole request to answer it: the writer
			// is returning. Bound the wait against a peer that did not.
			t := time.NewTimer(closeGrace)
			select {
			case werr = <-wrote:
				done = true
			case <-t.C:
			}
			t.Stop()
		}
	}
	if done && answered {
		_ = s.Close()
		return
	}
	_ = s.Reset()
	if !done {
		<-wrote
		return
	}
	if werr != nil && errors.Is(err, ErrNoFinal) {
		*errp = fmt.Errorf("%w (sending the request failed: %v)", err, werr)
	}
}

// readAnswer reads token frames up to the final or error frame.
func readAnswer(r *bufio.Reader, cfg ClientConfig, wd *watchdog, st *WireStats, onToken func(*TokenFrame) error) (*FinalFrame, error) {
	for {
		b, err := p2p.ReadFrame(r, cfg.MaxFrameSize)
		if err != nil {
			if cause := wd.cause(); cause != nil {
				return nil, cause
			}
			if errors.Is(err, p2p.ErrFrameTooLarge) {
				return nil, fmt.Errorf("%w: %w", ErrMalformedFrame, err)
			}
			if err == io.EOF {
				return nil, ErrNoFinal
			}
			return nil, fmt.Errorf("%w: %w", ErrNoFinal, err)
		}
		// The stall clock stops while the frame is handled: a slow consumer
		// (a buyer reading slowly) must not count as a stalled provider.
		wd.disarm()
		f, err := decodeFrame(b, cfg.MaxFrameSize)
		if err != nil {
			return nil, err
		}
		switch {
		case f.Error != nil:
			return nil, f.Error
		case f.Final != nil:
			return f.Final, nil
		}
		if st.FirstTokenAt.IsZero() {
			st.FirstTokenAt = time.Now()
		}
		if onToken != nil {
			if err := onToken(f.Token); err != nil {
				return nil, fmt.Errorf("infer: token callback: %w", err)
			}
		}
		if cfg.StallTimeout > 0 {
			wd.arm(cfg.StallTimeout, ErrStalled)
		}
	}
}

// watchdog resets the stream when a timer or the caller's context fires,
// remembering why so that the failed read reports the cause.
type watchdog struct {
	mu     sync.Mutex
	s      network.Stream
	onFire func()
	why    error
	gen    uint64
	t      *time.Timer
}

func (w *watchdog) setStream(s network.Stream) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.s = s
	if w.why != nil {
		_ = s.Reset()
	}
}

// arm replaces the pending timer with one firing cause after d.
func (w *watchdog) arm(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Stop()
	}
	w.gen++
	gen := w.gen
	w.t = time.AfterFunc(d, func() {
		w.mu.Lock()
		stale := gen != w.gen
		w.mu.Unlock()
		if !stale {
			w.fire(cause)
		}
	})
}

func (w *watchdog) disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	if w.t != nil {
		w.t.Stop()
		w.t = nil
	}
}

// fire records the first cause and aborts the call.
func (w *watchdog) fire(cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.why != nil {
		return
	}
	w.why = cause
	if w.onFire != nil {
		w.onFire()
	}
	if w.s != nil {
		_ = w.s.Reset()
	}
}

func (w *watchdog) cause() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why
}

// countingStream counts the bytes written to and read from a stream.
type countingStream struct {
	s              network.Stream
	sent, received atomic.Int64
}

func (c *countingStream) Read(b []byte) (int, error) {
	n, err := c.s.Read(b)
	c.received.Add(int64(n))
	return n, err
}

func (c *countingStream) Write(b []byte) (int, error) {
	n, err := c.s.Write(b)
	c.sent.Add(int64(n))
	return n, err
}
