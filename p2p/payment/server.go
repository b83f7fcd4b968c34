package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// Sink persists the records a provider receives. Accept returns nil only
// once rec is durable; it must be idempotent (a gateway delivers a record
// again when it did not get the ack). A *Refusal (possibly wrapped) is a
// permanent refusal: the gateway stops delivering that record. Any other
// error is transient: the gateway delivers it again later. Accept is
// called for one record at a time per stream, and concurrently across
// streams.
type Sink interface {
	Accept(ctx context.Context, from peer.ID, rec *receipt.PaymentRecord) error
}

// ServerConfig bounds the server side. Zero limits take the defaults.
type ServerConfig struct {
	// Network is this node's network name; a delivery naming another is
	// refused record by record with CodeWrongNetwork. Required.
	Network string
	// Limits cap the deliveries in progress, of one peer (default 4) and
	// of all (default 64), and bound one exchange: reading the delivery,
	// persisting its records, writing the ack (default 30 s). Records the
	// sink has not reached by then are answered CodeRetry.
	p2p.Limits
	// Registerer takes the count of handler panics (a private registry
	// when nil).
	Registerer prometheus.Registerer
}

// Defaults of ServerConfig.
const (
	DefaultMaxPerPeer    = 4
	DefaultMaxConcurrent = 64
	DefaultTimeout       = 30 * time.Second
)

// writeGrace bounds the ack write once the exchange's time is up.
const writeGrace = 2 * time.Second

// Validate checks the configuration.
func (c ServerConfig) Validate() error {
	if err := p2p.ValidateServer(c.Network, c.Limits); err != nil {
		return fmt.Errorf("payment: server config: %w", err)
	}
	return nil
}

// Stats counts what the server did since it was made.
type Stats struct {
	Deliveries uint64 // frames answered with an ack
	Accepted   uint64 // records the sink persisted
	Refused    uint64 // records refused permanently (wrong network, malformed, by the sink)
	Transient  uint64 // records answered CodeRetry
	Reset      uint64 // streams reset: malformed or oversized frames, over a limit, broken
}

type counters struct{ deliveries, accepted, refused, transient, reset atomic.Uint64 }

// Server serves ProtocolID on a host, passing each received record to its
// Sink.
type Server struct {
	h    host.Host
	cfg  ServerConfig
	sink Sink
	log  *slog.Logger

	stats counters
	life  *p2p.StreamServer
}

// NewServer makes a server; Start registers it on h.
func NewServer(h host.Host, cfg ServerConfig, sink Sink, log *slog.Logger) (*Server, error) {
	if h == nil {
		return nil, errors.New("payment: server needs a host")
	}
	if sink == nil {
		return nil, errors.New("payment: server needs a sink")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.Limits = cfg.Limits.Or(p2p.Limits{MaxPerPeer: DefaultMaxPerPeer, MaxConcurrent: DefaultMaxConcurrent, Timeout: DefaultTimeout})
	return &Server{h: h, cfg: cfg, sink: sink, log: log,
		life: p2p.NewStreamServer(h, ProtocolID, cfg.PeerLimits("deliveries"))}, nil
}

// Start registers the stream handler. A server starts once.
func (s *Server) Start() error {
	spec := p2p.StreamSpec{Service: ServiceName, MaxFrame: MaxFrameSize, Reserve: 2, // the frame and the decoded records
		ReadTimeout: s.cfg.Timeout, WriteTimeout: s.cfg.Timeout + writeGrace,
		OnReset: func() { s.stats.reset.Add(1) }, Registerer: s.cfg.Registerer, Log: s.log}
	if err := s.life.Serve(spec, s.handle); err != nil {
		return fmt.Errorf("payment: %w", err)
	}
	return nil
}

// Stop removes the stream handler, cancels the deliveries in progress
// (their remaining records are answered CodeRetry) and waits for them. A
// second Stop does nothing.
func (s *Server) Stop() { s.life.Stop() }

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	return Stats{Deliveries: s.stats.deliveries.Load(), Accepted: s.stats.accepted.Load(),
		Refused: s.stats.refused.Load(), Transient: s.stats.transient.Load(), Reset: s.stats.reset.Load()}
}
