package infer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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
	// Network is this node's network name, sent in every request
	// (Request.Network); a provider of another network refuses it (421
	// terms.CodeWrongNetwork). Set it to the p2p network name.
	Network string
	// StopGrace bounds the wait for the final frame after the token
	// callback returned ErrStop; default 2 s.
	StopGrace time.Duration
	// Warm, if set, supplies a stream opened ahead of the call and is
	// refilled after each answered one (see Warm); nil opens every stream
	// on the call's path.
	Warm *Warm
}

// defaultStopGrace is ClientConfig.StopGrace's default.
const defaultStopGrace = 2 * time.Second

// inlineWriteLimit is the largest request Call writes on its own
// goroutine; yamux's initial stream window is 256 KiB.
const inlineWriteLimit = 64 << 10

// Call opens a stream to p, sends req (with Network set to cfg.Network),
// and delivers each TokenFrame to onToken in order; it returns the
// FinalFrame.
//
// Errors: an *ErrorFrame sent by the provider; ErrFirstTokenTimeout and
// ErrStalled; ErrMalformedFrame; ErrNoFinal when the stream ends, breaks or
// is reset before a final frame (wrapping the transport error); ctx's error
// when ctx ends first; an error wrapping ErrInvalidRequest for a request
// Validate refuses; ErrUnreachable (wrapping the network error) when no
// stream could be opened; and the error
// of onToken, which aborts the call. On every failure the stream is reset,
// so the provider stops generating. WireStats are valid on every return.
//
// An onToken error wrapping ErrStop stops the call but keeps its bill:
// Call half-closes the stream (the provider's handler sees Stopped), reads
// on without delivering tokens, and returns the provider's final frame if
// it arrives within cfg.StopGrace, always with an error wrapping ErrStop
// (and the onToken error). WireStats count every byte, also those read
// after the stop.
//
// With cfg.Warm the call goes on the stream the pool holds for p, if any,
// and an answered call has the pool open p's next one.
func Call(ctx context.Context, h host.Host, p peer.ID, req *Request, cfg ClientConfig, onToken func(*TokenFrame) error) (*FinalFrame, WireStats, error) {
	var st WireStats
	if cfg.Network != req.Network {
		r := *req
		r.Network = cfg.Network
		req = &r
	}
	if err := req.Validate(); err != nil {
		return nil, st, err
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = defaultStopGrace
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
	if s := cfg.Warm.take(p); s != nil {
		final, st, unused, err := exchange(ctx, s, wd, payload, cfg, onToken)
		// A warm stream the provider dropped (it restarted, or the
		// connection went) is reset before anything comes back: the call
		// goes again, once, on a new stream. Sending a request twice
		// costs nothing but the work: only a final frame is ever paid.
		if !unused {
			if err == nil {
				cfg.Warm.refill(p)
			}
			return final, st, err
		}
	}
	s, err := h.NewStream(p2p.AllowRelayed(sctx, "tenzro inference"), p, ProtocolID)
	if err != nil {
		if cause := wd.cause(); cause != nil {
			return nil, st, cause
		}
		if ctx.Err() != nil { // the caller's end, not the provider's
			return nil, st, fmt.Errorf("infer: open stream to %s: %w", p, err)
		}
		return nil, st, fmt.Errorf("infer: open stream to %s: %w: %w", p, ErrUnreachable, err)
	}
	if err := s.Scope().SetService(ServiceName); err != nil {
		_ = s.Reset()
		return nil, st, fmt.Errorf("infer: attach stream to service: %w", err)
	}
	final, st, unused, err := exchange(ctx, s, wd, payload, cfg, onToken)
	if err == nil {
		cfg.Warm.refill(p)
	}
	if unused && s.Conn().IsClosed() {
		// The stream opened on a connection that was already dying (its
		// peer killed, the close not yet seen): nothing reached the
		// provider, as with a failed dial.
		err = fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return final, st, err
}

// exchange sends the encoded request on s and reads the answer. unused
// reports a stream that ended before a single byte came back, while
// neither the watchdog nor ctx had ended the call.
func exchange(ctx context.Context, s network.Stream, wd *watchdog, payload []byte, cfg ClientConfig, onToken func(*TokenFrame) error) (final *FinalFrame, st WireStats, unused bool, err error) {
	wd.setStream(s)
	stopCtx := context.AfterFunc(ctx, func() { wd.fire(fmt.Errorf("infer: %w", context.Cause(ctx))) })
	defer stopCtx()

	cs := &countingStream{s: s}
	rw := &requestWrite{done: make(chan struct{})}
	if len(payload) <= inlineWriteLimit {
		// Fits the muxer's initial window: the write cannot wait for the
		// provider to read, so it is made here, saving a goroutine hand-off
		// on every call. The watchdog still bounds it (a stuck connection).
		rw.finish(p2p.WriteFrame(cs, payload))
	} else {
		go func() { rw.finish(p2p.WriteFrame(cs, payload)) }()
	}

	a := answer{r: bufio.NewReader(cs), cfg: cfg, wd: wd, st: &st, onToken: onToken, stop: func() error {
		// Tokens arrive only once the provider read the whole request,
		// so the writer is returning; the half-close must follow it.
		<-rw.done
		return s.CloseWrite()
	}}
	final, answered, err := a.read()
	st.FinishedAt = time.Now()
	stopCtx()
	unused = err != nil && !answered && cs.received.Load() == 0 && errors.Is(err, ErrNoFinal) && wd.cause() == nil && ctx.Err() == nil
	if !unused {
		wd.disarm() // else the first-token timer keeps running for the next stream
	}
	finishStream(s, rw, answered, &err)
	st.BytesSent, st.BytesReceived = cs.sent.Load(), cs.received.Load()
	return final, st, unused, err
}

// requestWrite is the outcome of writing the request frame.
type requestWrite struct {
	done chan struct{}
	err  error
}

func (w *requestWrite) finish(err error) {
	w.err = err
	close(w.done)
}

// finishStream closes s after a complete answer (final or error frame) with
// the request fully written, and resets it otherwise; it waits for the
// request writer to return. A failed request write is noted on a cut stream.
func finishStream(s network.Stream, rw *requestWrite, answered bool, errp *error) {
	err := *errp
	done := false
	select {
	case <-rw.done:
		done = true
	default:
		if answered {
			// The provider read the whole request to answer it: the writer
			// is returning. Bound the wait against a peer that did not.
			t := time.NewTimer(closeGrace)
			select {
			case <-rw.done:
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
		<-rw.done
		return
	}
	if rw.err != nil && errors.Is(err, ErrNoFinal) {
		*errp = fmt.Errorf("%w (sending the request failed: %w)", err, rw.err)
	}
}

// answer reads the provider's frames of one call.
type answer struct {
	r       *bufio.Reader
	cfg     ClientConfig
	wd      *watchdog
	st      *WireStats
	onToken func(*TokenFrame) error
	stop    func() error // half-closes the stream
	stopped error        // the onToken error that stopped the call
}

// read reads token frames up to the final or error frame; answered is true
// when one of those arrived.
func (a *answer) read() (final *FinalFrame, answered bool, err error) {
	for {
		b, err := p2p.ReadFrame(a.r, a.cfg.MaxFrameSize)
		if err != nil {
			if cause := a.wd.cause(); cause != nil {
				return nil, false, cause
			}
			if errors.Is(err, p2p.ErrFrameTooLarge) {
				return nil, false, a.withStop(fmt.Errorf("%w: %w", ErrMalformedFrame, err))
			}
			if errors.Is(err, io.EOF) {
				return nil, false, a.withStop(ErrNoFinal)
			}
			return nil, false, a.withStop(fmt.Errorf("%w: %w", ErrNoFinal, err))
		}
		// The stall clock stops while the frame is handled: a slow consumer
		// (a buyer reading slowly) must not count as a stalled provider.
		if a.stopped == nil {
			a.wd.disarm()
		}
		f, err := decodeFrame(b, a.cfg.MaxFrameSize)
		if err != nil {
			return nil, false, a.withStop(err)
		}
		switch {
		case f.Error != nil:
			return nil, true, a.withStop(f.Error)
		case f.Final != nil:
			return f.Final, true, a.withStop(nil)
		}
		if a.st.FirstTokenAt.IsZero() {
			a.st.FirstTokenAt = time.Now()
		}
		if a.stopped != nil {
			continue // read on to the final frame, delivering nothing
		}
		if a.onToken != nil {
			if err := a.onToken(f.Token); err != nil {
				if !errors.Is(err, ErrStop) {
					return nil, false, fmt.Errorf("infer: token callback: %w", err)
				}
				a.stopped = fmt.Errorf("infer: token callback: %w", err)
				// One timer for the whole rest of the answer.
				a.wd.arm(a.cfg.StopGrace, fmt.Errorf("%w; no final frame within %s", a.stopped, a.cfg.StopGrace))
				if err := a.stop(); err != nil {
					return nil, false, fmt.Errorf("%w; half-closing the stream: %w", a.stopped, err)
				}
				continue
			}
		}
		if a.cfg.StallTimeout > 0 {
			a.wd.arm(a.cfg.StallTimeout, ErrStalled)
		}
	}
}

// withStop returns err, or after a stop an error wrapping the stop and err.
func (a *answer) withStop(err error) error {
	switch {
	case a.stopped == nil:
		return err
	case err == nil:
		return a.stopped
	default:
		return fmt.Errorf("%w; then: %w", a.stopped, err)
	}
}
