package sessioncache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/p2p"
)

// ServerConfig bounds the server; zero values take the defaults.
type ServerConfig struct {
	// Limits cap the streams in progress, of one peer (default 4) and of
	// all (default 64), and bound one exchange (default 10 s).
	p2p.Limits
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
	life *p2p.StreamServer
}

// NewServer makes a server and registers its handler on h; Stop removes
// it.
func NewServer(h host.Host, hold *Holder, cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if h == nil || hold == nil {
		return nil, errors.New("sessioncache: server needs a host and a holder")
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("sessioncache: server config: %w", err)
	}
	cfg.Limits = cfg.Limits.Or(p2p.Limits{MaxPerPeer: DefaultMaxPerPeer, MaxConcurrent: DefaultMaxConcurrent, Timeout: DefaultTimeout})
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{h: h, hold: hold, cfg: cfg,
		life: p2p.NewStreamServer(h, ProtocolID, cfg.PeerLimits("exchanges"))}
	// The frame's reservation is held to the end: the holder keeps the
	// state it decodes.
	spec := p2p.StreamSpec{Service: ServiceName, MaxFrame: MaxFrameSize, Reserve: 2,
		ReadTimeout: cfg.Timeout, WriteTimeout: cfg.Timeout, Registerer: cfg.Registerer, Log: log}
	if err := s.life.Serve(spec, s.handle); err != nil {
		return nil, fmt.Errorf("sessioncache: %w", err)
	}
	return s, nil
}

// Stop removes the handler and waits for the exchanges in progress.
func (s *Server) Stop() { s.life.Stop() }

// Active is the number of exchanges in progress.
func (s *Server) Active() int { return s.life.Active() }

// handle serves one stream the opening prepared (p2p.Serve): one request
// frame in, one answer frame out.
func (s *Server) handle(ctx context.Context, st *p2p.Stream) error {
	b, err := st.ReadFrame()
	if err != nil {
		return fmt.Errorf("sessioncache: read frame: %w", err)
	}
	req, err := DecodeRequest(b)
	if err != nil {
		_ = s.hold.count(&Rejection{ReasonMalformed, err}) // counted; the wrapped error below is returned
		return fmt.Errorf("sessioncache: malformed frame: %w", err)
	}
	out, err := encode("answer", s.answer(ctx, st.Peer, req, st.Log))
	if err == nil {
		err = p2p.WriteFrame(st, out)
	}
	if err != nil {
		return fmt.Errorf("sessioncache: write answer: %w", err)
	}
	return nil
}

func (s *Server) answer(ctx context.Context, from peer.ID, req *Request, log *slog.Logger) *Answer {
	fail := func(err error) *Answer {
		code := CodeRefused
		var r *Rejection
		if errors.Is(err, ErrBehind) {
			code = CodeRetry
		} else if errors.As(err, &r) && r.Reason == ReasonUnassigned {
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
