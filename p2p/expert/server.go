package expert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// ErrNotHeld is what a Computer returns (wrapped) for an expert it does
// not hold; the holder answers CodeNotHeld.
var ErrNotHeld = errors.New("expert: not held here")

// ErrBadRows is what a Computer returns (wrapped) for rows of the wrong
// width; the holder answers CodeBadRequest.
var ErrBadRows = errors.New("expert: rows do not fit the model")

// Computer runs the experts a holder holds, with its own verified copy of
// the weights. Compute must return one output row per input row, each row
// independent of the others.
type Computer interface {
	Compute(ctx context.Context, model [32]byte, layer, expert int, rows [][]float32) ([][]float32, error)
}

// ServerConfig bounds the holder side; zero values take the defaults.
type ServerConfig struct {
	// Network is this node's network name; requests naming another are
	// refused with CodeWrongNetwork. Required.
	Network string
	// Limits cap the exchanges in progress, of one caller (default 8: a
	// serving node has a few forward passes in flight at once) and of all
	// (default 64), and bound one exchange: read, compute, sign, write
	// (default 10 s).
	p2p.Limits
	// Metrics takes the holder's series (nil: not exported).
	Metrics *Metrics
	// Registerer takes the count of handler panics (a private registry
	// when nil).
	Registerer prometheus.Registerer
}

// Defaults of ServerConfig.
const (
	DefaultMaxPerPeer    = 8
	DefaultMaxConcurrent = 64
	DefaultServerTimeout = 10 * time.Second
)

// Validate checks the configuration.
func (c ServerConfig) Validate() error {
	if err := p2p.ValidateServer(c.Network, c.Limits); err != nil {
		return fmt.Errorf("expert: server config: %w", err)
	}
	return nil
}

// ServerStats counts what a holder did.
type ServerStats struct {
	Exchanges uint64 // requests answered with rows and a receipt
	Refused   uint64 // requests answered with a failure code
	Rows      uint64 // expert rows computed (expert-tokens)
	Reset     uint64 // streams reset: malformed, oversized, over a limit, broken
}

// Server serves ProtocolID: it computes the batches it is sent with its
// Computer and signs a receipt over each answer with the current session.
type Server struct {
	h       host.Host
	cfg     ServerConfig
	compute Computer
	session func() (*identity.Session, error)
	log     *slog.Logger
	life    *p2p.StreamServer

	exchanges, refused, rows, reset atomic.Uint64
	lastCert                        atomic.Pointer[sessionHash]
}

// NewServer makes a holder's server; Start registers it on h. session
// returns the certified session key receipts are signed with.
func NewServer(h host.Host, cfg ServerConfig, c Computer, session func() (*identity.Session, error), log *slog.Logger) (*Server, error) {
	if h == nil || c == nil || session == nil {
		return nil, errors.New("expert: server needs a host, a computer and a session")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.Limits = cfg.Limits.Or(p2p.Limits{MaxPerPeer: DefaultMaxPerPeer, MaxConcurrent: DefaultMaxConcurrent, Timeout: DefaultServerTimeout})
	return &Server{h: h, cfg: cfg, compute: c, session: session, log: log,
		life: p2p.NewStreamServer(h, ProtocolID, cfg.PeerLimits("expert exchanges"))}, nil
}

// Start registers the stream handler; a server starts once.
func (s *Server) Start() error {
	spec := p2p.StreamSpec{Service: ServiceName, MaxFrame: MaxRequestSize, Reserve: 3, // the frame, the decoded rows, the output rows
		ReadTimeout: s.cfg.Timeout, WriteTimeout: s.cfg.Timeout + writeGrace,
		OnReset: func() { s.reset.Add(1) }, Registerer: s.cfg.Registerer, Log: s.log}
	if err := s.life.Serve(spec, s.handle); err != nil {
		return fmt.Errorf("expert: %w", err)
	}
	return nil
}

// Stop removes the handler, cancels exchanges in progress and waits for
// them. A second Stop does nothing.
func (s *Server) Stop() { s.life.Stop() }

// Stats returns the server's counters.
func (s *Server) Stats() ServerStats {
	return ServerStats{Exchanges: s.exchanges.Load(), Refused: s.refused.Load(), Rows: s.rows.Load(), Reset: s.reset.Load()}
}
