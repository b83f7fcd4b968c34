package gateway

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/router/pricing"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// Config tunes routing.
type Config struct {
	Surcharges pricing.Surcharges
	// Deadline bounds a whole request: every attempt, failover and the
	// continuation.
	Deadline time.Duration
	// FirstTokenTimeout and StallTimeout make a silent provider fail over
	// instead of being waited on; 0 disables each.
	FirstTokenTimeout time.Duration
	StallTimeout      time.Duration
	// MaxRetries is the number of failover rounds after the first.
	MaxRetries int
	// Weights of the weighted strategy.
	Weights strategy.Weights
	// DefaultMaxTokens bounds output when the buyer sets no max_tokens, so
	// every request has a price ceiling to hold funds against.
	DefaultMaxTokens int
}

// DefaultConfig returns the routing defaults.
func DefaultConfig() Config {
	return Config{
		Deadline: 2 * time.Minute, FirstTokenTimeout: 30 * time.Second, StallTimeout: 10 * time.Second,
		MaxRetries: 2, Weights: strategy.Weights{Price: 1, Latency: 1, Standing: 1, Load: 0.1}, DefaultMaxTokens: 512,
	}
}

// Validate checks the config.
func (c Config) Validate() error {
	var errs []error
	if c.Deadline <= 0 {
		errs = append(errs, errors.New("gateway: deadline must be positive"))
	}
	if c.FirstTokenTimeout < 0 || c.StallTimeout < 0 {
		errs = append(errs, errors.New("gateway: stream timeouts must not be negative"))
	}
	if c.MaxRetries < 0 || c.MaxRetries > 10 {
		errs = append(errs, fmt.Errorf("gateway: max retries %d outside 0..10", c.MaxRetries))
	}
	if c.DefaultMaxTokens < 1 {
		errs = append(errs, errors.New("gateway: default max tokens must be positive"))
	}
	return errors.Join(errs...)
}
