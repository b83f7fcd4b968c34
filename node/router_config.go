package node

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/router/pricing"
)

// RouterConfig is the [router] section: how this node prices and routes
// the requests it accepts.
type RouterConfig struct {
	// Surcharges per verification level, micro-units per call, until
	// consensus governs them.
	Surcharges pricing.Surcharges `toml:"surcharges"`
	// Deadline bounds a whole request, failovers and continuation included.
	Deadline time.Duration `toml:"deadline"`
	// FirstTokenTimeout and StallTimeout trigger failover on a stream
	// instead of waiting: no first token in time, or no token for this long.
	FirstTokenTimeout time.Duration `toml:"first_token_timeout"`
	StallTimeout      time.Duration `toml:"stall_timeout"`
}

// DefaultRouterConfig returns the routing defaults.
func DefaultRouterConfig() RouterConfig {
	return RouterConfig{
		Surcharges:        pricing.Surcharges{None: 0, Receipt: 1, Optimistic: 5, TEE: 20},
		Deadline:          2 * time.Minute,
		FirstTokenTimeout: 30 * time.Second,
		StallTimeout:      10 * time.Second,
	}
}

// Validate checks the section.
func (r RouterConfig) Validate() error {
	var errs []error
	if r.Deadline < time.Second || r.Deadline > time.Hour {
		errs = append(errs, fmt.Errorf("router.deadline: %s outside 1s..1h", r.Deadline))
	}
	if r.FirstTokenTimeout < 0 || r.FirstTokenTimeout > r.Deadline {
		errs = append(errs, fmt.Errorf("router.first_token_timeout: %s outside 0..deadline", r.FirstTokenTimeout))
	}
	if r.StallTimeout < 0 || r.StallTimeout > r.Deadline {
		errs = append(errs, fmt.Errorf("router.stall_timeout: %s outside 0..deadline", r.StallTimeout))
	}
	return errors.Join(errs...)
}
