package provider

import (
	"errors"
	"fmt"
	"time"
)

// StandbyConfig is [provider.standby]: whether this provider offers to
// stand by warm as a session's successor, at what fee.
type StandbyConfig struct {
	Enabled bool `toml:"enabled"`
	// FeePerHour is the announced standby fee, integer micro-units per
	// hour; a chain's standby stream must pay at least this rate.
	FeePerHour uint64 `toml:"fee_per_hour"`
	// KeyFile holds the X-Wing key states are sealed to (relative to the
	// home; made on first start, mode 0600).
	KeyFile string `toml:"key_file"`
	// StateDir keeps the sessions held and their latest states (relative
	// to the home), so a restarted successor is still warm.
	StateDir string `toml:"state_dir"`
	// MaxSessions bounds the sessions held at once.
	MaxSessions int `toml:"max_sessions"`
	// ClaimInterval is how often, on a chain, accrued standby pay is
	// claimed from each session's stream.
	ClaimInterval time.Duration `toml:"claim_interval"`
}

// DefaultStandbyConfig returns the standby defaults (off).
func DefaultStandbyConfig() StandbyConfig {
	return StandbyConfig{FeePerHour: 36_000, KeyFile: "session-cache.key", StateDir: "session-cache-states", MaxSessions: 1024, ClaimInterval: time.Minute}
}

// Validate checks the section, naming each bad key.
func (c StandbyConfig) Validate() error {
	var errs []error
	if c.Enabled && c.FeePerHour == 0 {
		errs = append(errs, errors.New("provider.standby.fee_per_hour: must be positive when standby is enabled"))
	}
	if c.Enabled && c.KeyFile == "" {
		errs = append(errs, errors.New("provider.standby.key_file: required when standby is enabled"))
	}
	if c.Enabled && c.StateDir == "" {
		errs = append(errs, errors.New("provider.standby.state_dir: required when standby is enabled"))
	}
	if c.MaxSessions < 1 || c.MaxSessions > 1<<20 {
		errs = append(errs, fmt.Errorf("provider.standby.max_sessions: %d outside 1..1048576", c.MaxSessions))
	}
	if c.ClaimInterval < time.Second || c.ClaimInterval > 24*time.Hour {
		errs = append(errs, fmt.Errorf("provider.standby.claim_interval: %s outside 1s..24h", c.ClaimInterval))
	}
	return errors.Join(errs...)
}
