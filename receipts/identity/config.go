package identity

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// Config is the [identity] section of a node's config file: where the
// hardware identity key lives and how long each session certificate it
// signs lasts.
type Config struct {
	// Backend is the hardware key's backend (hwkey.ParseBackend).
	Backend string `toml:"backend" comment:"Hardware identity key: tpm (/dev/tpmrm0) | tpm-sim (TPM simulator, state under identity/) | software (a key file; shown as \"software\" everywhere)."`
	// Device is the TPM device of the tpm backend.
	Device string `toml:"device"`
	// SessionTTL is each session certificate's lifetime.
	SessionTTL time.Duration `toml:"session_ttl" comment:"Lifetime of each session certificate; renewed when a quarter remains."`
}

// DefaultSessionTTL is a session certificate's default lifetime.
const DefaultSessionTTL = 24 * time.Hour

// DefaultConfig is the section's defaults on backend.
func DefaultConfig(backend hwkey.Backend) Config {
	return Config{Backend: string(backend), Device: hwkey.DefaultDevice, SessionTTL: DefaultSessionTTL}
}

// HWKey is the hardware key's config, its state kept in dir.
func (c Config) HWKey(dir string) hwkey.Config {
	return hwkey.Config{Backend: hwkey.Backend(c.Backend), Dir: dir, Device: c.Device}
}

// Validate checks the section with the key's state in dir; errors name
// the key.
func (c Config) Validate(dir string) error {
	var errs []error
	if b, err := hwkey.ParseBackend(c.Backend); err != nil {
		errs = append(errs, fmt.Errorf("identity.backend: %w", err))
	} else if err := c.HWKey(dir).Validate(); err != nil && b != "" {
		errs = append(errs, fmt.Errorf("identity: %w", err))
	}
	if c.SessionTTL < time.Minute || c.SessionTTL > 30*24*time.Hour {
		errs = append(errs, fmt.Errorf("identity.session_ttl: %s outside 1m..720h", c.SessionTTL))
	}
	return errors.Join(errs...)
}
