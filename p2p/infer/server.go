package infer

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Handler serves one validated request. It streams output through send (safe
// for concurrent use; it fails once ctx is done or after the handler
// returned) and returns the final frame. Returning an *ErrorFrame (possibly
// wrapped) sends that error frame; any other error sends a 500. ctx is
// cancelled when the client resets or closes the stream, at
// ServerConfig.MaxDuration, and by unregister.
type Handler func(ctx context.Context, req *Request, peer peer.ID, send func(*TokenFrame) error) (*FinalFrame, error)

// ServerConfig bounds the server side. Zero fields take the defaults.
type ServerConfig struct {
	MaxRequestSize int           // request frame cap; default DefaultMaxRequestSize
	MaxConcurrent  int           // streams served at once by this provider; default 64
	RequestTimeout time.Duration // read deadline for the request frame; default 10 s
	MaxDuration    time.Duration // whole-stream cap; default 10 min
}

// closeGrace bounds the writes left once a request is cancelled or over.
const closeGrace = 2 * time.Second

func (c ServerConfig) withDefaults() ServerConfig {
	if c.MaxRequestSize <= 0 {
		c.MaxRequestSize = DefaultMaxRequestSize
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = 64
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 10 * time.Second
	}
	if c.MaxDuration <= 0 {
		c.MaxDuration = 10 * time.Minute
	}
	return c
}

type server struct {
	cfg      ServerConfig
	handler  Handler
	log      *slog.Logger
	ctx      context.Context
	inflight atomic.Int64

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Register serves ProtocolID on h. unregister removes the stream handler,
// cancels the requests in flight and waits for their handlers to return.
func Register(h host.Host, cfg ServerConfig, handler Handler, log *slog.Logger) (unregister func()) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &server{cfg: cfg.withDefaults(), handler: handler, log: log.With("protocol", ProtocolID), ctx: ctx}
	h.SetStreamHandler(ProtocolID, srv.handle)
	var once sync.Once
	return func() {
		once.Do(func() {
			h.RemoveStreamHandler(ProtocolID)
			srv.mu.Lock()
			srv.closed = true
			srv.mu.Unlock()
			cancel()
			srv.wg.Wait()
		})
	}
}

func (srv *server) handle(s network.Stream) {
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		_ = s.Reset()
		return
	}
	srv.wg.Add(1)
	srv.mu.Unlock()
	defer srv.wg.Done()

	log := srv.log.With("peer", s.Conn().RemotePeer())
	if err := s.Scope().SetService(ServiceName); err != nil {
		log.Debug("attach stream to service", "err", err)
		_ = s.Reset()
		return
	}
	start := time.Now()
	_ = s.SetWriteDeadline(start.Add(srv.cfg.MaxDuration + closeGrace))
	if srv.inflight.Add(1) > int64(srv.cfg.MaxConcurrent) {
		srv.inflight.Add(-1)
		srv.reject(s, &ErrorFrame{Status: 503, Code: terms.CodeOverloaded, Message: "provider at capacity", Retryable: true})
		return
	}
	defer srv.inflight.Add(-1)

	_ = s.SetReadDeadline(start.Add(srv.cfg.RequestTimeout))
	r := bufio.NewReader(s)
	size := peekFrameSize(r)
	if size > 0 && size <= srv.cfg.MaxRequestSize {
		// The frame buffer and the decoded request.
		if err := s.Scope().ReserveMemory(2*size, network.ReservationPriorityHigh); err != nil {
			srv.reject(s, &ErrorFrame{Status: 503, Code: terms.CodeOverloaded, Message: "provider out of memory for requests", Retryable: true})
			return
		}
		defer s.Scope().ReleaseMemory(2 * size)
	}
	b, err := p2p.ReadFrame(r, srv.cfg.MaxRequestSize)
	if err != nil {
		if errors.Is(err, p2p.ErrFrameTooLarge) {
			srv.reject(s, &ErrorFrame{Status: 400, Code: terms.CodeBadRequest, Message: fmt.Sprintf("request frame exceeds %d bytes", srv.cfg.MaxRequestSize)})
			return
		}
		log.Debug("read request", "err", err)
		_ = s.Reset()
		return
	}
	req, err := decodeRequest(b, srv.cfg.MaxRequestSize)
	if err != nil {
		srv.reject(s, &ErrorFrame{Status: 400, Code: terms.CodeBadRequest, Message: err.Error()})
		return
	}
	_ = s.SetReadDeadline(start.Add(srv.cfg.MaxDuration + closeGrace))
	srv.serve(s, r, req, start, log)
}

// withHeld prefixes the frame b with the held last-token frame, if any,
// so both go out in one write.
func withHeld(held, b []byte) []byte {
	if held == nil {
		return p2p.AppendFrame(nil, b)
	}
	return p2p.AppendFrame(p2p.AppendFrame(nil, held), b)
}

// serve runs the handler and writes its frames.
func (srv *server) serve(s network.Stream, r *bufio.Reader, req *Request, start time.Time, log *slog.Logger) {
	ctx, cancel := context.WithDeadline(srv.ctx, start.Add(srv.cfg.MaxDuration))
	defer cancel()
	// Once cancelled, pending and remaining writes get closeGrace.
	stop := context.AfterFunc(ctx, func() { _ = s.SetWriteDeadline(time.Now().Add(closeGrace)) })
	defer stop()

	// The client keeps its write side open until it has the answer: any
	// byte, EOF or error on it means the client is gone (or misbehaves).
	var gone atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		_, err := r.ReadByte()
		gone.Store(true)
		cancel()
		if err == nil {
			log.Debug("unexpected data after the request; cancelling")
		}
	}()

	var mu sync.Mutex
	done := false
	var held []byte // the last token's frame, written with the final frame
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
			if _, err := s.Write(b); err != nil {
				cancel()
				return fmt.Errorf("infer: send token frame: %w", err)
			}
			return nil
		}
		if t.Last {
			held = b
			return nil
		}
		if err := p2p.WriteFrame(s, b); err != nil {
			cancel()
			return fmt.Errorf("infer: send token frame: %w", err)
		}
		return nil
	}
	final, herr := srv.handler(ctx, req, s.Conn().RemotePeer(), send)
	mu.Lock()
	done = true
	mu.Unlock()

	var out *Frame
	switch {
	case gone.Load():
		log.Debug("client went away", "elapsed", time.Since(start))
		_ = s.Reset()
		<-watched
		return
	case herr == nil && final != nil:
		out = &Frame{Final: final}
	case srv.ctx.Err() != nil:
		out = &Frame{Error: &ErrorFrame{Status: 503, Code: terms.CodeShuttingDown, Message: "provider shutting down", Retryable: true}}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		out = &Frame{Error: &ErrorFrame{Status: 504, Code: terms.CodeTimeout, Message: fmt.Sprintf("generation exceeded %s", srv.cfg.MaxDuration), Retryable: true}}
	case herr != nil:
		var ef *ErrorFrame
		if errors.As(herr, &ef) && ef != nil {
			out = &Frame{Error: sanitize(ef)}
		} else {
			log.Warn("handler failed", "err", herr)
			out = &Frame{Error: &ErrorFrame{Status: 500, Code: terms.CodeInternal, Message: "internal error", Retryable: true}}
		}
	default:
		log.Warn("handler returned neither a final frame nor an error")
		out = &Frame{Error: &ErrorFrame{Status: 500, Code: terms.CodeInternal, Message: "internal error", Retryable: true}}
	}
	b, err := encodeFrame(out)
	if err != nil {
		log.Warn("handler produced an invalid frame", "err", err)
		b, err = encodeFrame(&Frame{Error: &ErrorFrame{Status: 500, Code: terms.CodeInternal, Message: "internal error", Retryable: true}})
	}
	if err == nil {
		_, err = s.Write(withHeld(held, b))
	}
	if err != nil {
		log.Debug("write last frame", "err", err)
		_ = s.Reset()
	} else {
		_ = s.Close()
	}
	<-watched
}

// reject answers with one error frame and closes the stream.
func (srv *server) reject(s network.Stream, e *ErrorFrame) {
	_ = s.SetWriteDeadline(time.Now().Add(closeGrace))
	b, err := encodeFrame(&Frame{Error: e})
	if err == nil {
		err = p2p.WriteFrame(s, b)
	}
	if err != nil {
		_ = s.Reset()
		return
	}
	_ = s.Close()
}

// peekFrameSize returns the declared length of the next frame without
// consuming it, or -1 if the prefix cannot be read or is malformed
// (ReadFrame then reports the problem).
func peekFrameSize(r *bufio.Reader) int {
	for n := 1; n <= binary.MaxVarintLen64; n++ {
		hdr, err := r.Peek(n)
		if err != nil {
			return -1
		}
		if hdr[n-1] < 0x80 {
			v, k := binary.Uvarint(hdr)
			if k <= 0 || v > uint64(1<<40) {
				return -1
			}
			return int(v)
		}
	}
	return -1
}

// sanitize makes a handler's error frame sendable: a status in 400..599,
// valid UTF-8 strings within the limits.
func sanitize(e *ErrorFrame) *ErrorFrame {
	c := *e
	if c.Status < 400 || c.Status > 599 {
		c.Status = 500
	}
	c.RetryAfterMs = max(c.RetryAfterMs, 0)
	c.Code = clip(c.Code, maxCodeLen)
	c.Message = clip(c.Message, maxMessageLen)
	return &c
}

// clip returns s as valid UTF-8 of at most n bytes.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
