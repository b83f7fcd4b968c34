package hedge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/router/strategy"
)

// Hedge delay bounds (DESIGN.md, Router).
const (
	MinDelay = 40 * time.Millisecond
	MaxDelay = 500 * time.Millisecond
)

// DefaultMaxRetries is the number of failover rounds after the first when
// Options.MaxRetries is zero.
const DefaultMaxRetries = 2

// Errors Run returns, wrapped.
var (
	ErrDeadline    = errors.New("hedge: request deadline exceeded")
	ErrExhausted   = errors.New("hedge: every attempt failed")
	ErrNoCandidate = errors.New("hedge: no eligible candidate")
)

// PermanentError marks an attempt's error as caused by the request itself
// (a 400-class answer: context length, content policy, bad parameters):
// another provider would refuse it too, so Run returns it at once.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err as non-retryable (nil stays nil).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// IsPermanent reports whether err is, or wraps, a PermanentError.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// Delay is the hedge delay for a primary: its P² p95 clamped to
// [MinDelay, MaxDelay], or MaxDelay while its latency is unknown.
func Delay(c strategy.Candidate) time.Duration {
	if !c.LatencyKnown {
		return MaxDelay
	}
	return min(max(c.P95, MinDelay), MaxDelay)
}

// AttemptFunc sends the request to one candidate. It must return soon after
// ctx is cancelled: Run cancels it when another attempt wins or the
// deadline passes.
type AttemptFunc[R any] func(ctx context.Context, c strategy.Candidate) (R, error)

// Options of one request.
type Options struct {
	// NoHedge turns hedging off for this request (the caller opted out).
	NoHedge bool
	// MaxRetries is how many failover rounds may follow the first; 0 means
	// DefaultMaxRetries, negative means none.
	MaxRetries int
	// Deadline bounds the whole request, all attempts included; 0 leaves
	// only ctx's own deadline.
	Deadline time.Duration
	// Clock times the hedge delay and the deadline; nil is the wall clock.
	Clock clock.Clock
	// Eligible is asked just before each dispatch (primary, hedge, retry)
	// whether a candidate may still be used; the router passes its failure
	// detector and breaker here so a hedge never goes to a provider that
	// went down or whose breaker opened after the ranking. Nil admits all.
	Eligible func(strategy.Candidate) bool
	// DelayFor overrides Delay.
	DelayFor func(strategy.Candidate) time.Duration
	// LabelAttempts puts each attempt's Dispatch in its context.
	LabelAttempts bool
}

// Fate of one attempt.
type Fate string

const (
	Won       Fate = "won"
	Failed    Fate = "failed"    // retryable error
	Rejected  Fate = "rejected"  // permanent error, returned to the caller
	Cancelled Fate = "cancelled" // lost the race or outlived the deadline
)

// Try is one attempt as Run saw it.
type Try struct {
	Peer    peer.ID       `json:"peer"`
	Round   int           `json:"round"` // 0 for the first, then one per failover
	Hedge   bool          `json:"hedge"`
	Start   time.Duration `json:"start"`   // since the request started
	Elapsed time.Duration `json:"elapsed"` // until it answered, failed or was cancelled
	Fate    Fate          `json:"fate"`
	Err     error         `json:"-"`
}

// Report is what happened to one request. Only Winner served it: bill and
// credit that provider alone. A Cancelled try's Elapsed is a lower bound on
// its latency (see quantile.Tracker.ObserveCensored).
type Report struct {
	Winner           peer.ID       `json:"winner,omitempty"`
	Tries            []Try         `json:"tries"`
	HedgesDispatched int           `json:"hedges_dispatched"`
	HedgeWon         bool          `json:"hedge_won"`
	Failovers        int           `json:"failovers"`
	DeadlineMiss     bool          `json:"deadline_miss"`
	Elapsed          time.Duration `json:"elapsed"`
}

// AttemptsPer returns how many attempts each candidate received.
func (r Report) AttemptsPer() map[peer.ID]int {
	m := make(map[peer.ID]int, len(r.Tries))
	for _, t := range r.Tries {
		m[t.Peer]++
	}
	return m
}

func (o Options) maxRetries() int {
	switch {
	case o.MaxRetries < 0:
		return 0
	case o.MaxRetries == 0:
		return DefaultMaxRetries
	default:
		return o.MaxRetries
	}
}

// wrapf builds the final error: msg plus every error in errs, all wrapped.
func wrapf(sentinel error, msg string, cause error) error {
	if cause == nil {
		return fmt.Errorf("%w: %s", sentinel, msg)
	}
	return fmt.Errorf("%w: %s: %w", sentinel, msg, cause)
}
