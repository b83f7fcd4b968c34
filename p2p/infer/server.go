package infer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Handler serves one validated request. It streams output through send (safe
// for concurrent use; it fails once ctx is done or after the handler
// returned, and within ServerConfig.WriteStallTimeout when the client stops
// reading) and returns the final frame. Returning an *ErrorFrame (possibly
// wrapped) sends that error frame; any other error sends a 500.
//
// ctx is cancelled when the client resets the stream (nothing more is
// written), when the client half-closes it to stop the call (cause
// ErrStoppedByClient, see Stopped: the final frame the handler returns is
// still sent, so it can bill the tokens generated), when a write stalls
// (cause ErrWriteStalled), at ServerConfig.MaxDuration, and by unregister.
type Handler func(ctx context.Context, req *Request, peer peer.ID, send func(*TokenFrame) error) (*FinalFrame, error)

// Stopped reports whether ctx, a Handler's context, ended because the
// client stopped the call: the handler should then return a final frame
// for what it generated.
func Stopped(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrStoppedByClient)
}

// ServerConfig bounds the server side. Zero fields take the defaults.
type ServerConfig struct {
	// Network is this node's network; a request naming another (or none,
	// when this is set) is answered 421 terms.CodeWrongNetwork before anything
	// else. Set it to the p2p network name.
	Network        string
	MaxRequestSize int           // request frame cap; default DefaultMaxRequestSize
	MaxConcurrent  int           // handlers running at once; default 64
	RequestTimeout time.Duration // read deadline for the request frame; default 10 s
	MaxDuration    time.Duration // whole-stream cap; default 10 min

	// MaxPerPeer caps one peer's requests served or waiting at once
	// (beyond it: 429 terms.CodeBusy); default MaxConcurrent.
	MaxPerPeer int
	// MaxQueue caps the requests waiting for a slot, all peers together;
	// default MaxConcurrent. QueueTimeout bounds one wait (then 429
	// terms.CodeBusy); default 2 s. RetryAfter is the hint busy answers carry;
	// default 1 s.
	MaxQueue     int
	QueueTimeout time.Duration
	RetryAfter   time.Duration

	// WriteStallTimeout: a frame write that makes no progress for this
	// long cancels the call (cause ErrWriteStalled) and frees its slot;
	// default 5 s.
	WriteStallTimeout time.Duration

	// Known reports whether a caller is known (registered on chain or
	// allowlisted); nil means every caller is. Unknown callers share one
	// global budget: UnknownConcurrency requests at once (default 1) and
	// UnknownRate requests per minute (default 6, token bucket on Clock;
	// nil Clock means the wall clock). Over budget: 429 terms.CodeRateLimited.
	Known func(peer.ID) bool

	Registerer prometheus.Registerer // counts handler panics; nil: a private registry

	// Paid, if set, reports whether a request carries a pay authorization
	// that verifies: a paying caller is known whatever its peer ID (the
	// provider holds its settler to its debts instead).
	Paid               func(peer.ID, *Request) bool
	UnknownConcurrency int
	UnknownRate        int
	Clock              clock.Clock
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
	if c.MaxPerPeer <= 0 {
		c.MaxPerPeer = c.MaxConcurrent
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = c.MaxConcurrent
	}
	if c.QueueTimeout <= 0 {
		c.QueueTimeout = 2 * time.Second
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = time.Second
	}
	if c.WriteStallTimeout <= 0 {
		c.WriteStallTimeout = 5 * time.Second
	}
	if c.UnknownConcurrency <= 0 {
		c.UnknownConcurrency = 1
	}
	if c.UnknownRate <= 0 {
		c.UnknownRate = 6
	}
	if c.Clock == nil {
		c.Clock = clock.New()
	}
	return c
}

type server struct {
	cfg     ServerConfig
	handler Handler
	ctx     context.Context
	admit   *admitter

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
	cfg = cfg.withDefaults()
	srv := &server{cfg: cfg, handler: handler, ctx: ctx, admit: newAdmitter(cfg)}
	h.SetStreamHandler(ProtocolID, p2p.Serve(p2p.StreamSpec{Protocol: ProtocolID, Service: ServiceName,
		MaxFrame: cfg.MaxRequestSize, Reserve: 2, // the frame buffer and the decoded request
		ReadTimeout: cfg.RequestTimeout, WriteTimeout: cfg.MaxDuration + closeGrace,
		Admit: srv.enter, Registerer: cfg.Registerer, Log: log}, srv.handle))
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

// enter counts a stream in, for unregister to wait for; it fails once
// unregister has begun.
func (srv *server) enter(peer.ID) (release func(), err error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closed {
		return nil, errors.New("infer: server unregistered")
	}
	srv.wg.Add(1)
	return srv.wg.Done, nil
}

// handle serves one stream the opening prepared (p2p.Serve); it ends the
// stream itself, but for the errors of reading the request.
func (srv *server) handle(s *p2p.Stream) error {
	// A client may open its stream ahead of the call (Warm): unregister
	// must not wait a whole RequestTimeout for a request that never came.
	stopRead := context.AfterFunc(srv.ctx, func() { _ = s.Reset() })
	req, ef, err := srv.readRequest(s)
	if !stopRead() {
		return nil // unregistering: the stream is reset
	}
	if err != nil {
		return err
	}
	if ef != nil {
		srv.reject(s, ef)
		return nil
	}
	// Watched from here on, so a client that leaves while its request
	// waits for a slot gives the slot up.
	_ = s.SetReadDeadline(time.Now().Add(srv.cfg.QueueTimeout + closeGrace))
	watch := watchRead(s.Reader())
	from := s.Peer
	known := srv.cfg.Known == nil || srv.cfg.Known(from) || srv.cfg.Paid != nil && srv.cfg.Paid(from, req)
	release, ef := srv.admit.acquire(srv.ctx, watch.done, from, known)
	if ef != nil {
		if ended, eof := watch.ended(); ended && !eof {
			_ = s.Reset()
			return nil
		} else if ended {
			ef = &ErrorFrame{Status: 499, Code: terms.CodeStopped, Message: "stopped by the client before it started"}
		}
		srv.reject(s, ef)
		return nil
	}
	admitted := time.Now()
	_ = s.SetReadDeadline(admitted.Add(srv.cfg.MaxDuration + closeGrace))
	srv.serve(s, watch, req, admitted, release, s.Log)
	return nil
}

// readRequest reads, decodes and checks the request frame: its network
// first, then its validity. An error means the stream is to be reset.
func (srv *server) readRequest(s *p2p.Stream) (*Request, *ErrorFrame, error) {
	defer s.ReleaseFrame()
	b, err := s.ReadFrame()
	switch {
	case errors.Is(err, p2p.ErrNoMemory):
		return nil, &ErrorFrame{Status: 429, Code: terms.CodeBusy, Message: "provider out of memory for requests", Retryable: true,
			RetryAfterMs: srv.cfg.RetryAfter.Milliseconds()}, nil
	case errors.Is(err, p2p.ErrFrameTooLarge):
		return nil, &ErrorFrame{Status: 400, Code: terms.CodeBadRequest, Message: fmt.Sprintf("request frame exceeds %d bytes", srv.cfg.MaxRequestSize)}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("infer: read request: %w", err)
	}
	req, err := unmarshalRequest(b, srv.cfg.MaxRequestSize)
	if err != nil {
		return nil, &ErrorFrame{Status: 400, Code: terms.CodeBadRequest, Message: err.Error()}, nil
	}
	if err := p2p.CheckNetwork(srv.cfg.Network, req.Network); err != nil {
		return nil, &ErrorFrame{Status: 421, Code: terms.CodeWrongNetwork, Message: err.Error()}, nil
	}
	if err := req.Validate(); err != nil {
		return nil, &ErrorFrame{Status: 400, Code: terms.CodeBadRequest, Message: err.Error()}, nil
	}
	return req, nil, nil
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

// sanitize makes a handler's error frame sendable: a status in 400..599,
// valid UTF-8 strings within the limits.
func sanitize(e *ErrorFrame) *ErrorFrame {
	c := *e
	if c.Status < 400 || c.Status > 599 {
		c.Status = 500
	}
	c.RetryAfterMs = max(c.RetryAfterMs, 0)
	c.Code = p2p.Clip(c.Code, maxCodeLen)
	c.Message = p2p.Clip(c.Message, maxMessageLen)
	return &c
}
