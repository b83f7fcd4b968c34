package breaker

import (
	"errors"
	"fmt"
	"time"
)

// State of a breaker.
type State int

const (
	Closed   State = iota // requests flow; consecutive failures are counted
	Open                  // requests are refused until the cooldown ends
	HalfOpen              // one probe request may test the provider
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	default:
		return fmt.Sprintf("state(%d)", int(s))
	}
}

// MarshalText encodes the state by name (for JSON).
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Kind classifies what an admitted request's attempt said about the
// provider.
type Kind int

const (
	// Success: the provider answered. Clears the failure and backoff counts;
	// a successful probe closes the breaker.
	Success Kind = iota + 1
	// Failure: 5xx, connection reset, timeout, a receipt that fails
	// verification. Counts towards opening; a failed probe re-opens.
	Failure
	// Throttled: 429 or an explicit "overloaded". The provider is alive but
	// asked for less traffic: it is not contacted again before its
	// Retry-After, or before an exponential backoff with jitter when it gave
	// none. Neither a success nor a failure.
	Throttled
	// Neutral: the attempt says nothing about the provider's health (a hedge
	// loser cancelled by the router, a 400-class error caused by the
	// request). It only returns the ticket.
	Neutral
)

// Outcome is reported for every ticket Allow issued.
type Outcome struct {
	Kind Kind
	// NotBefore is the provider's Retry-After as an absolute time on the
	// breaker's clock, on any kind of outcome; zero if it sent none.
	NotBefore time.Time
}

// Ticket is the admission Allow grants; hand it back to Report exactly once.
type Ticket struct {
	gen   uint64
	probe bool
	ok    bool
}

// Probe reports whether the ticket is the half-open state's single probe.
func (t Ticket) Probe() bool { return t.probe }

// Errors Allow returns, wrapped in a *RejectedError.
var (
	ErrOpen          = errors.New("breaker open")
	ErrProbeInFlight = errors.New("breaker half-open: probe in flight")
	ErrBackoff       = errors.New("provider asked to back off")
)

// RejectedError is why Allow refused and when it may next admit.
type RejectedError struct {
	Reason  error     // ErrOpen, ErrProbeInFlight or ErrBackoff
	RetryAt time.Time // zero when unknown (a probe is in flight)
}

func (e *RejectedError) Error() string {
	if e.RetryAt.IsZero() {
		return "breaker: " + e.Reason.Error()
	}
	return fmt.Sprintf("breaker: %v until %s", e.Reason, e.RetryAt.UTC().Format(time.RFC3339Nano))
}

func (e *RejectedError) Unwrap() error { return e.Reason }
