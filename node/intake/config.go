package intake

import (
	"errors"
	"fmt"
	"time"
)

// Config is the intake's share of a node's [api] section: the Bounds as
// an operator writes them.
type Config struct {
	// BodySlots is how many request bodies the OpenAI routes read at once
	// (with their 4 MB cap, about 128 MB in flight at 32); RPCBodySlots is
	// JSON-RPC's own pool, which clients without a token use.
	BodySlots    int `toml:"body_slots" comment:"Request bodies read at once: the OpenAI routes' pool (the token is checked before the body) and JSON-RPC's own, so clients without a token cannot take the slots buyers need; one client address holds at most body_slots_per_client of a pool."`
	RPCBodySlots int `toml:"rpc_body_slots"`
	// BodySlotsPerClient is the most slots of a pool one client address
	// (an IPv4 address, an IPv6 /64) holds at once.
	BodySlotsPerClient int `toml:"body_slots_per_client"`
	// BodyMinRate is the slowest a body may arrive, in bytes a second
	// on average after BodyGrace; BodyTimeout bounds a whole body.
	BodyMinRate int64         `toml:"body_min_rate" comment:"A body must arrive at body_min_rate bytes a second on average after body_grace (0 turns the rate off), and whole within body_timeout."`
	BodyGrace   time.Duration `toml:"body_grace"`
	BodyTimeout time.Duration `toml:"body_timeout"`
}

// DefaultConfig is the intake's defaults.
func DefaultConfig() Config {
	return Config{BodySlots: 32, RPCBodySlots: 8, BodySlotsPerClient: 8,
		BodyMinRate: 16 << 10, BodyGrace: 2 * time.Second, BodyTimeout: 30 * time.Second}
}

// Validate checks the bounds; each error names its key after prefix
// (e.g. "api.").
func (c Config) Validate(prefix string) error {
	var errs []error
	for _, k := range []struct {
		key string
		v   int
	}{{"body_slots", c.BodySlots}, {"rpc_body_slots", c.RPCBodySlots}, {"body_slots_per_client", c.BodySlotsPerClient}} {
		if k.v < 1 || k.v > 4096 {
			errs = append(errs, fmt.Errorf("%s%s: %d outside 1..4096", prefix, k.key, k.v))
		}
	}
	if c.BodyMinRate < 0 {
		errs = append(errs, fmt.Errorf("%sbody_min_rate: %d is negative (0 turns the minimum rate off)", prefix, c.BodyMinRate))
	}
	if c.BodyGrace < 0 || c.BodyGrace > time.Minute {
		errs = append(errs, fmt.Errorf("%sbody_grace: %s outside 0..1m", prefix, c.BodyGrace))
	}
	if c.BodyTimeout < time.Second || c.BodyTimeout > 10*time.Minute {
		errs = append(errs, fmt.Errorf("%sbody_timeout: %s outside 1s..10m", prefix, c.BodyTimeout))
	}
	return errors.Join(errs...)
}

// Bounds are the limits c sets.
func (c Config) Bounds() Bounds {
	return Bounds{Slots: c.BodySlots, RPCSlots: c.RPCBodySlots, PerClient: c.BodySlotsPerClient,
		MinRate: c.BodyMinRate, Grace: c.BodyGrace, Timeout: c.BodyTimeout}
}
