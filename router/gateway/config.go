package gateway

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/router/pricing"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// Config tunes routing. It is the one source of the routing defaults; the
// node's [router] section holds it, so every field's TOML key is its own.
type Config struct {
	// Surcharges per verification level, flat micro-units per call: the
	// fallback of a gateway without a chain. With a chain the governed
	// surcharge_* params are the only ones used (Deps.Surcharges).
	Surcharges pricing.Surcharges `toml:"surcharges" comment:"Surcharge per call of each verification level, in micro-units: a FALLBACK without a chain (with one, the chain's surcharge_* params are used)."`
	// Deadline bounds a whole request: every attempt, failover and the
	// continuation.
	Deadline time.Duration `toml:"deadline" comment:"Whole-request deadline (failovers and continuation included), and the stream limits that trigger failover instead of waiting."`
	// FirstTokenTimeout and StallTimeout make a silent provider fail over
	// instead of being waited on; 0 disables each.
	FirstTokenTimeout time.Duration `toml:"first_token_timeout"`
	StallTimeout      time.Duration `toml:"stall_timeout"`
	// StallMin is the shortest stall timeout a provider's own pace can
	// bring StallTimeout down to (16 × its p95 gap between tokens, once
	// known), so a silent provider is left in seconds, not StallTimeout.
	StallMin time.Duration `toml:"stall_min" comment:"A provider that has shown its pace gets 16 x its p95 gap between tokens instead, no shorter than this."`
	// MaxRetries is the number of failover rounds after the first.
	MaxRetries int `toml:"max_retries" comment:"Failover rounds after the first (both primary and hedge failed), 0..10."`
	// Weights of the weighted strategy.
	Weights strategy.Weights `toml:"weights" comment:"Weights of the weighted strategy (the default): each signal is scored 0..1 across the candidates (price and latency lower is better, standing higher, load lower) and the weighted sum ranks them."`
	// DefaultMaxTokens bounds output when the buyer sets no max_tokens, so
	// every request has a price ceiling to hold funds against.
	DefaultMaxTokens int `toml:"default_max_tokens" comment:"Output bound of a request that sets no max_tokens: every request needs a price ceiling to hold funds against."`
	// BuyerDefaults is the fair share every buyer gets unless its own
	// entry says otherwise (Buyers).
	BuyerDefaults BuyerLimits `toml:"buyer_defaults" comment:"Every buyer's fair share unless its [[router.buyers]] entry sets its own: requests in flight at once, and new requests per minute (bursts of up to 10 s of the rate). Beyond either the buyer gets 429 with Retry-After."`
	// Buyers are per-account limits; the node fills them from its
	// [[router.buyers]] entries.
	Buyers map[string]BuyerLimits `toml:"-"`
	// Sessions bounds the session table and sizes standby streams.
	Sessions SessionConfig `toml:"sessions" comment:"Sessions (tenzro.session): at most max_sessions held at once (more are refused with 503 until idle ones end) and max_per_buyer of one buyer (429); a session no turn used for idle_timeout ends and its standby stream is stopped; a successor's standby stream is funded for standby_horizon at its announced fee, and each successor proves the state it holds every challenge_interval (and at once when its heartbeats lapse) or is replaced."`
}

// DefaultConfig returns the routing defaults.
func DefaultConfig() Config {
	return Config{
		Surcharges: pricing.Surcharges{None: 0, Receipt: 1, Optimistic: 5, TEE: 20},
		Deadline:   2 * time.Minute, FirstTokenTimeout: 30 * time.Second, StallTimeout: 10 * time.Second, StallMin: 2 * time.Second,
		MaxRetries: 2, Weights: strategy.DefaultWeights, DefaultMaxTokens: 512, BuyerDefaults: DefaultBuyerLimits(),
		Sessions: SessionConfig{MaxSessions: 10_000, MaxPerBuyer: 256, IdleTimeout: 30 * time.Minute, StandbyHorizon: time.Hour,
			ChallengeInterval: time.Minute},
	}
}

// Validate checks the config; each error names its key, prefixed by
// prefix (e.g. "router.").
func (c Config) Validate(prefix string) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s%s: "+format, append([]any{prefix, key}, args...)...))
	}
	if c.Deadline < time.Second || c.Deadline > time.Hour {
		bad("deadline", "%s outside 1s..1h", c.Deadline)
	}
	if c.FirstTokenTimeout < 0 || c.FirstTokenTimeout > c.Deadline {
		bad("first_token_timeout", "%s outside 0..deadline", c.FirstTokenTimeout)
	}
	if c.StallTimeout < 0 || c.StallTimeout > c.Deadline {
		bad("stall_timeout", "%s outside 0..deadline", c.StallTimeout)
	}
	if c.StallMin < 0 || c.StallMin > time.Hour {
		bad("stall_min", "%s outside 0..1h (a stall_timeout below it wins)", c.StallMin)
	}
	if c.MaxRetries < 0 || c.MaxRetries > 10 {
		bad("max_retries", "%d outside 0..10", c.MaxRetries)
	}
	if _, err := strategy.New(c.Weights, nil); err != nil {
		bad("weights", "%v (each of price, latency, standing, load must be >= 0, not all 0)", err)
	}
	if c.DefaultMaxTokens < 1 || c.DefaultMaxTokens > maxMaxTokens {
		bad("default_max_tokens", "%d outside 1..%d", c.DefaultMaxTokens, maxMaxTokens)
	}
	if d := c.BuyerDefaults; d.MaxConcurrent < 1 || d.RatePerMinute < 1 {
		bad("buyer_defaults", "max_concurrent and rate_per_minute must be positive")
	}
	if err := c.BuyerDefaults.Validate(); err != nil {
		bad("buyer_defaults", "%w", err)
	}
	if s := c.Sessions; s.MaxSessions < 1 || s.MaxSessions > 1_000_000 {
		bad("sessions.max_sessions", "%d outside 1..1000000", s.MaxSessions)
	}
	if s := c.Sessions; s.MaxPerBuyer < 1 || s.MaxPerBuyer > s.MaxSessions {
		bad("sessions.max_per_buyer", "%d outside 1..max_sessions (%d)", s.MaxPerBuyer, s.MaxSessions)
	}
	if s := c.Sessions; s.IdleTimeout < time.Minute || s.IdleTimeout > 7*24*time.Hour {
		bad("sessions.idle_timeout", "%s outside 1m..168h", s.IdleTimeout)
	}
	if s := c.Sessions; s.ChallengeInterval < time.Second || s.ChallengeInterval > time.Hour {
		bad("sessions.challenge_interval", "%s outside 1s..1h", s.ChallengeInterval)
	}
	if s := c.Sessions; s.StandbyHorizon < time.Minute || s.StandbyHorizon > 30*24*time.Hour {
		bad("sessions.standby_horizon", "%s outside 1m..720h", s.StandbyHorizon)
	}
	for acct, l := range c.Buyers {
		if err := l.Validate(); err != nil {
			bad("buyers", "%s: %w", acct, err)
		}
	}
	return errors.Join(errs...)
}
