package infer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// withHeld prefixes the frame b with the held last-token frame, if any,
// so both go out in one write.
func withHeld(held, b []byte) []byte {
	if held == nil {
		return p2p.AppendFrame(nil, b)
	}
	return p2p.AppendFrame(p2p.AppendFrame(nil, held), b)
}

// serve runs the handler in its slot and writes its frames. The slot is
// released as soon as the handler returns, before the last frame is
// written.
func (srv *server) serve(s network.Stream, watch *readWatch, req *Request, start time.Time, release func(), log *slog.Logger) {
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(release) }
	defer free()
	ctx, cancel := context.WithDeadline(srv.ctx, start.Add(srv.cfg.MaxDuration))
	defer cancel()
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	w := newStallWriter(s, srv.cfg.WriteStallTimeout, start.Add(srv.cfg.MaxDuration+closeGrace))
	// Once cancelled, pending and remaining writes get closeGrace.
	stop := context.AfterFunc(ctx, func() { w.cut(time.Now().Add(closeGrace)) })
	defer stop()

	// The client keeps its write side open while it wants the answer (see
	// readWatch). On a stop the handler is cancelled and its final frame
	// still sent; when the client is gone nothing more is written.
	var gone atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		<-watch.done
		if watch.eof {
			cancelCause(ErrStoppedByClient)
			return
		}
		gone.Store(true)
		cancelCause(fmt.Errorf("infer: client went away: %w", watch.err))
		if watch.err == nil {
			log.Debug("unexpected data after the request; cancelling")
		}
	}()

	var mu sync.Mutex
	done, stalled := false, false
	var held []byte // the last token's frame, written with the final frame
	write := func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			// The frame is torn: the stream is reset once the handler returns.
			stalled = true
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// The client stopped reading (or the call's grace is spent).
				cancelCause(ErrWriteStalled)
			} else {
				cancelCause(fmt.Errorf("infer: send token frame: %w", err))
			}
			return fmt.Errorf("infer: send token frame: %w", err)
		}
		return nil
	}
	send := func(t *TokenFrame) error {
		if t == nil {
			return errors.New("infer: nil token frame")
		}
		b, err := encodeFrame(&Frame{Token: t})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if done {
			return errors.New("infer: send after the handler returned")
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("infer: request cancelled: %w", context.Cause(ctx))
		}
		if held != nil { // a frame after the one marked last
			b, held = withHeld(held, b), nil
			return write(b)
		}
		if t.Last {
			held = b
			return nil
		}
		return write(p2p.AppendFrame(nil, b))
	}
	final, herr := srv.handler(ctx, req, s.Conn().RemotePeer(), send)
	mu.Lock()
	done = true
	torn := stalled
	mu.Unlock()
	free()

	if gone.Load() || torn {
		log.Debug("stream abandoned", "client_gone", gone.Load(), "write_stalled", torn, "elapsed", time.Since(start))
		_ = s.Reset()
		<-watched
		return
	}
	b, err := encodeFrame(srv.lastFrame(ctx, final, herr, log))
	if err != nil {
		log.Warn("handler produced an invalid frame", "err", err)
		b, err = encodeFrame(&Frame{Error: &ErrorFrame{Status: 500, Code: terms.CodeInternal, Message: "internal error", Retryable: true}})
	}
	if err == nil {
		_, err = w.Write(withHeld(held, b))
	}
	if err != nil {
		log.Debug("write last frame", "err", err)
		_ = s.Reset()
	} else {
		// Before Close, which can wait on the muxer: the client may
		// already act on the frame (a provider counts the call as owed
		// here, and its payment can follow within a millisecond).
		if herr == nil && final != nil && final.Written != nil {
			final.Written()
		}
		_ = s.Close()
	}
	<-watched
}

// lastFrame is the frame that ends the answer: the handler's final frame,
// else an error frame saying why there is none.
func (srv *server) lastFrame(ctx context.Context, final *FinalFrame, herr error, log *slog.Logger) *Frame {
	var ef *ErrorFrame
	switch {
	case herr == nil && final != nil:
		return &Frame{Final: final}
	case srv.ctx.Err() != nil:
		return &Frame{Error: &ErrorFrame{Status: 503, Code: terms.CodeShuttingDown, Message: "provider shutting down", Retryable: true}}
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return &Frame{Error: &ErrorFrame{Status: 504, Code: terms.CodeTimeout, Message: fmt.Sprintf("generation exceeded %s", srv.cfg.MaxDuration), Retryable: true}}
	case errors.As(herr, &ef) && ef != nil:
		return &Frame{Error: sanitize(ef)}
	case Stopped(ctx):
		return &Frame{Error: &ErrorFrame{Status: 499, Code: terms.CodeStopped, Message: "stopped by the client before any final frame"}}
	case herr != nil:
		log.Warn("handler failed", "err", herr)
	default:
		log.Warn("handler returned neither a final frame nor an error")
	}
	return &Frame{Error: &ErrorFrame{Status: 500, Code: terms.CodeInternal, Message: "internal error", Retryable: true}}
}

// writeChunk is the most stallWriter writes under one deadline: a frame
// write fails only when no chunk of it goes out for a whole stall timeout,
// however large the frame and slow (but moving) the link.
const writeChunk = 16 << 10

// stallWriter writes to a stream in chunks, each under a deadline of 3/4 to
// all of stall from its start, never past the hard deadline set at
// creation and moved by cut.
type stallWriter struct {
	s     network.Stream
	stall time.Duration

	mu   sync.Mutex
	hard time.Time // no write goes past it
	cur  time.Time // the deadline of the chunk being written
}

func newStallWriter(s network.Stream, stall time.Duration, hard time.Time) *stallWriter {
	return &stallWriter{s: s, stall: stall, hard: hard}
}

func (w *stallWriter) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		end := min(len(b), n+writeChunk)
		w.mu.Lock()
		now := time.Now()
		// The deadline is moved only once a quarter of it is used up:
		// setting it costs an allocation in the muxer, and a chunk still
		// gets at least three quarters of the stall timeout.
		if dl := now.Add(w.stall); w.cur.Sub(now) < w.stall-w.stall/4 {
			if w.hard.Before(dl) {
				dl = w.hard
			}
			if !dl.Equal(w.cur) {
				_ = w.s.SetWriteDeadline(dl)
				w.cur = dl
			}
		}
		w.mu.Unlock()
		m, err := w.s.Write(b[n:end])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// cut brings the hard deadline forward to t, also for a write in progress.
func (w *stallWriter) cut(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.Before(w.hard) {
		w.hard = t
	}
	if t.Before(w.cur) {
		w.cur = t
		_ = w.s.SetWriteDeadline(t)
	}
}
