package sessioncache

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/p2p"
)

// ServerConfig bounds the server; zero values take the defaults.
type ServerConfig struct {
	MaxPerPeer    int           // streams in progress per peer (default 4)
	MaxConcurrent int           // streams in progress in all (default 64)
	Timeout       time.Duration // one exchange (default 10 s)
	// Registerer takes the count of handler panics (a private registry
	// when nil).
	Registerer prometheus.Registerer
}

// Defaults of ServerConfig.
const (
	DefaultMaxPerPeer    = 4
	DefaultMaxConcurrent = 64
	DefaultTimeout       = 10 * time.Second
)

// Server serves ProtocolID for a Holder.
type Server struct {
	h    host.Host
	hold *Holder
	cfg  ServerConfig
	log  *slog.Logger
	life *p2p.StreamServer
}

// NewServer makes a server and registers its handler on h; Stop removes
// it.
func NewServer(h host.Host, hold *Holder, cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if h == nil || hold == nil {
		return nil, errors.New("sessioncache: server needs a host and a holder")
	}
	if cfg.MaxPerPeer < 0 || cfg.MaxConcurrent < 0 || cfg.Timeout < 0 {
		return nil, errors.New("sessioncache: server limits must not be negative")
	}
	if cfg.MaxPerPeer == 0 {
		cfg.MaxPerPeer = DefaultMaxPerPeer
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = max(DefaultMaxConcurrent, cfg.MaxPerPeer)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	guard := p2p.NewPanicGuard(cfg.Registerer, log)
	s := &Server{h: h, hold: hold, cfg: cfg, log: log.With("protocol", ProtocolID),
		life: p2p.NewStreamServer(h, ProtocolID, p2p.NewPeerLimits(cfg.MaxPerPeer, cfg.MaxConcurrent, "exchanges"))}
	if err := s.life.Start(guard.Wrap(ProtocolID, s.handle)); err != nil {
		return nil, fmt.Errorf("sessioncache: %w", err)
	}
	return s, nil
}

// Stop removes the handler and waits for the exchanges in progress.
func (s *Server) Stop() { s.life.Stop() }

// Active is the number of exchanges in progress.
func (s *Server) Active() int { return s.life.Active() }

func (s *Server) admit(p peer.ID) (func(), error) { return s.life.Admit(p) }

// handle serves one stream: one request frame in, one answer frame out.
func (s *Server) handle(st network.Stream) {
	from := st.Conn().RemotePeer()
	log := s.log.With("peer", from)
	release, err := s.admit(from)
	if err != nil {
		log.Debug("session-cache stream refused before reading", "err", err)
		_ = st.Reset()
		return
	}
	defer release()
	if err := st.Scope().SetService(ServiceName); err != nil {
		log.Debug("attach stream to service", "err", err)
		_ = st.Reset()
		return
	}
	deadline := time.Now().Add(s.cfg.Timeout)
	_ = st.SetDeadline(deadline)
	r := bufio.NewReader(st)
	if size := p2p.PeekFrameSize(r); size > 0 && size <= MaxFrameSize {
		if err := st.Scope().ReserveMemory(2*size, network.ReservationPriorityHigh); err != nil {
			log.Debug("reserve memory for the frame", "bytes", 2*size, "err", err)
			_ = st.Reset()
			return
		}
		defer st.Scope().ReleaseMemory(2 * size)
	}
	b, err := p2p.ReadFrame(r, MaxFrameSize)
	if err != nil {
		log.Debug("read session-cache frame", "err", err)
		_ = st.Reset()
		return
	}
	req, err := DecodeRequest(b)
	if err != nil {
		s.hold.count(&Rejection{ReasonMalformed, err})
		log.Debug("malformed session-cache frame", "err", err)
		_ = st.Reset()
		return
	}
	ctx, cancel := context.WithDeadline(s.life.Context(), deadline)
	ans := s.answer(ctx, from, req, log)
	cancel()
	out, err := encode("answer", ans)
	if err == nil {
		err = p2p.WriteFrame(st, out)
	}
	if err != nil {
		log.Debug("write session-cache answer", "err", err)
		_ = st.Reset()
		return
	}
	_ = st.Close()
}

func (s *Server) answer(ctx context.Context, from peer.ID, req *Request, log *slog.Logger) *Answer {
	fail := func(err error) *Answer {
		code := CodeRefused
		var r *Rejection
		if errors.As(err, &r) && r.Reason == ReasonUnassigned {
			code = CodeUnknown
		} else if !errors.As(err, &r) {
			code = CodeRetry
		}
		log.Info("session-cache request refused", "err", err)
		return &Answer{Code: code, Reason: clip(err.Error())}
	}
	switch {
	case len(req.State) > 0:
		if err := s.hold.Accept(from, req.State); err != nil {
			return fail(err)
		}
	case req.Assign != nil:
		if err := s.hold.Assign(ctx, from, req.Assign); err != nil {
			return fail(err)
		}
	default:
		proof, err := s.hold.Prove(req.Challenge.SessionID, req.Challenge.Nonce)
		if err != nil {
			return fail(err)
		}
		return &Answer{Proof: proof}
	}
	return &Answer{}
}
