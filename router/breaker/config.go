package breaker

import (
	"errors"
	"fmt"
	"time"
)

// Defaults for a zero Config field.
const (
	DefaultFailures = 5
	DefaultCooldown = 5 * time.Second
	// DefaultMaxCooldown bounds how long a provider that has recovered
	// can go untried: one half-open probe per 15 s is no load on a
	// provider that is still down, and a recovered one is back within it.
	DefaultMaxCooldown    = 15 * time.Second
	DefaultCooldownFactor = 2.0
	DefaultProbeTimeout   = 30 * time.Second
	DefaultBackoffBase    = 500 * time.Millisecond
	DefaultBackoffMax     = 30 * time.Second
	DefaultMaxRetryAfter  = 10 * time.Minute
)

// ErrConfig reports an invalid Config.
var ErrConfig = errors.New("breaker: invalid config")

// Config tunes a breaker. Zero fields take the defaults above.
type Config struct {
	// Failures is how many consecutive failures open the breaker.
	Failures int
	// Cooldown is how long the breaker stays open the first time.
	Cooldown time.Duration
	// CooldownFactor multiplies the cooldown after each failed probe, up to
	// MaxCooldown; 1 keeps it constant. A successful probe resets it.
	CooldownFactor float64
	MaxCooldown    time.Duration
	// ProbeTimeout is how long a half-open probe may go unreported before
	// another caller may probe (the first ticket is then ignored).
	ProbeTimeout time.Duration
	// BackoffBase and BackoffMax shape the wait after consecutive 429s that
	// carry no Retry-After: Base·2^(k-1) capped at Max, with jitter.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRetryAfter caps how far ahead a provider's Retry-After can push
	// its next request.
	MaxRetryAfter time.Duration
	// OnStateChange, if set, is called after every state transition, outside
	// the breaker's lock (for logs and metrics).
	OnStateChange func(from, to State)
}

func (c Config) withDefaults() (Config, error) {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Failures == 0 {
		c.Failures = DefaultFailures
	}
	if c.CooldownFactor == 0 {
		c.CooldownFactor = DefaultCooldownFactor
	}
	def(&c.Cooldown, DefaultCooldown)
	def(&c.MaxCooldown, max(DefaultMaxCooldown, c.Cooldown))
	def(&c.ProbeTimeout, DefaultProbeTimeout)
	def(&c.BackoffBase, DefaultBackoffBase)
	def(&c.BackoffMax, max(DefaultBackoffMax, c.BackoffBase))
	def(&c.MaxRetryAfter, DefaultMaxRetryAfter)
	switch {
	case c.Failures < 1:
		return c, fmt.Errorf("%w: failures %d < 1", ErrConfig, c.Failures)
	case !(c.CooldownFactor >= 1 && c.CooldownFactor <= 100):
		return c, fmt.Errorf("%w: cooldown factor %v not in [1, 100]", ErrConfig, c.CooldownFactor)
	case c.Cooldown < 0 || c.MaxCooldown < c.Cooldown || c.MaxCooldown > 24*time.Hour:
		return c, fmt.Errorf("%w: cooldown %v / max %v", ErrConfig, c.Cooldown, c.MaxCooldown)
	case c.BackoffBase < 0 || c.BackoffMax < c.BackoffBase || c.BackoffMax > 24*time.Hour:
		return c, fmt.Errorf("%w: backoff %v / max %v", ErrConfig, c.BackoffBase, c.BackoffMax)
	case c.ProbeTimeout < 0 || c.MaxRetryAfter < 0:
		return c, fmt.Errorf("%w: negative probe timeout or retry-after cap", ErrConfig)
	}
	return c, nil
}
