package p2p

import (
	"context"
	"errors"
	"sync"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// ErrServerStarted is StreamServer.Start's answer to a second Start, or to
// a Start after Stop: a server registers its handler once.
var ErrServerStarted = errors.New("server already started or stopped")

// StreamServer is the lifecycle every small request/answer protocol
// server (payment, session-cache, expert) shares: its handler is
// registered once by Start; each exchange is admitted by PeerLimits and
// runs under Context; Stop refuses new exchanges, removes the handler,
// cancels the exchanges in progress and waits for them.
type StreamServer struct {
	h      host.Host
	proto  protocol.ID
	limits *PeerLimits

	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	state int // 0 new, 1 started, 2 stopped
}

// NewStreamServer makes the lifecycle of a server of proto on h, its
// exchanges bounded by limits.
func NewStreamServer(h host.Host, proto protocol.ID, limits *PeerLimits) *StreamServer {
	ctx, cancel := context.WithCancel(context.Background())
	return &StreamServer{h: h, proto: proto, limits: limits, ctx: ctx, cancel: cancel}
}

// Start registers handle for the protocol.
func (s *StreamServer) Start(handle network.StreamHandler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != 0 {
		return ErrServerStarted
	}
	s.state = 1
	s.h.SetStreamHandler(s.proto, handle)
	return nil
}

// Serve starts the server with the opening of spec (see Serve): each
// stream is admitted by the server's PeerLimits, and fn's ctx ends at the
// stream's Deadline or at Stop.
func (s *StreamServer) Serve(spec StreamSpec, fn func(ctx context.Context, st *Stream) error) error {
	spec.Protocol, spec.Admit = s.proto, s.Admit
	return s.Start(Serve(spec, func(st *Stream) error {
		ctx, cancel := context.WithDeadline(s.ctx, st.Deadline)
		defer cancel()
		return fn(ctx, st)
	}))
}

// Stop removes the handler (if Start registered it), cancels Context and
// waits for every admitted exchange to be released. A second Stop does
// nothing; a Stop before Start makes a later Start fail.
func (s *StreamServer) Stop() {
	s.mu.Lock()
	if s.state == 2 {
		s.mu.Unlock()
		return
	}
	started := s.state == 1
	s.state = 2
	s.mu.Unlock()
	s.limits.Close()
	if started {
		s.h.RemoveStreamHandler(s.proto)
	}
	s.cancel()
	s.limits.Wait()
}

// Context is the parent of every exchange's context; Stop cancels it.
func (s *StreamServer) Context() context.Context { return s.ctx }

// Admit takes an exchange slot for p (see PeerLimits.Admit).
func (s *StreamServer) Admit(p peer.ID) (release func(), err error) { return s.limits.Admit(p) }

// Active is the number of exchanges in progress.
func (s *StreamServer) Active() int { return s.limits.Active() }
