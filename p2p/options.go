package p2p

import (
	"errors"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/prometheus/client_golang/prometheus"
)

// Option adjusts how New builds a Host.
type Option func(*options) error

type options struct {
	key    crypto.PrivKey
	log    *slog.Logger
	timing timing
	libp2p []libp2p.Option
	reg    prometheus.Registerer
}

// timing holds the host's protocol timers. Production uses the defaults;
// package tests shorten them.
type timing struct {
	// dialTimeout bounds each bootstrap dial, so a dead or black-holed
	// bootstrap address delays Start by at most this long.
	dialTimeout time.Duration
	// retryInterval is how often a host connected to no peer at all dials its
	// bootstrap peers again, and the first back-off of a failed provide.
	retryInterval time.Duration
	// maxBackoff caps the back-off between failed provides of one model.
	maxBackoff time.Duration
	// reprovideInterval is how often every provided model is announced again.
	reprovideInterval time.Duration
	// opTimeout bounds one provide or provider lookup, including the wait for
	// a non-empty routing table, when the caller's context has no earlier
	// deadline.
	opTimeout time.Duration
}

func defaultOptions() options {
	return options{
		log: slog.Default().With("component", "p2p"),
		timing: timing{
			dialTimeout:       5 * time.Second,
			retryInterval:     3 * time.Second,
			maxBackoff:        time.Minute,
			reprovideInterval: 5 * time.Minute,
			opTimeout:         time.Minute,
		},
	}
}

// WithLogger sets the structured logger (default: slog.Default() with
// component=p2p).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("WithLogger: nil logger")
		}
		o.log = l
		return nil
	}
}

// WithRegisterer registers the host's series (relayed connections, relay
// reservations, hole punches) on reg (default: a private registry).
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) error {
		if reg == nil {
			return errors.New("WithRegisterer: nil registerer")
		}
		o.reg = reg
		return nil
	}
}
