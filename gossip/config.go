package gossip

import (
	"errors"
	"fmt"
	"time"
)

// Config configures the gossip service; it is also the [gossip] section
// of a node's config file.
type Config struct {
	// Network is the node's network name, set from its top-level
	// network key, not from this section.
	Network string `toml:"-"`
	// Window is the freshness window for message timestamps (±).
	Window time.Duration `toml:"window" comment:"Messages stamped further than this from local time are ignored."`
}

// DefaultConfig is the [gossip] section's defaults; Network is the
// caller's.
func DefaultConfig() Config { return Config{Window: DefaultWindow} }

// Validate checks the configuration; errors name the key.
func (c Config) Validate() error {
	if c.Network == "" {
		return errors.New("gossip: network must be set")
	}
	if c.Window < time.Second || c.Window > 10*time.Minute {
		return fmt.Errorf("gossip.window: %s outside 1s..10m", c.Window)
	}
	return nil
}
