package hwkey

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"strings"
)

// Backend names where the hardware identity key lives.
type Backend string

// The supported backends.
const (
	BackendTPM      Backend = "tpm"
	BackendTPMSim   Backend = "tpm-sim"
	BackendSoftware Backend = "software"
)

// DefaultDevice is the TPM resource-manager device used when Config.Device
// is empty.
const DefaultDevice = "/dev/tpmrm0"

// DigestSize is the size of the digests a Key signs (SHA-256).
const DigestSize = 32

// ErrClosed is returned by Sign after Close.
var ErrClosed = errors.New("hwkey: key is closed")

// ParseBackend parses a backend name. "file" is accepted as an alias of
// "software".
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(strings.ToLower(strings.TrimSpace(s))); b {
	case BackendTPM, BackendTPMSim, BackendSoftware:
		return b, nil
	case "file":
		return BackendSoftware, nil
	}
	return "", errUnknownBackend(s)
}

func errUnknownBackend(s string) error {
	return fmt.Errorf("hwkey: unknown backend %q (valid: %q, %q, %q)",
		s, BackendTPM, BackendTPMSim, BackendSoftware)
}

// Hardware reports whether b runs the TPM code path. The simulator counts:
// it exercises the same code, and its label "tpm-sim" says what it is.
func (b Backend) Hardware() bool {
	return b == BackendTPM || b == BackendTPMSim
}

// String returns the backend name.
func (b Backend) String() string { return string(b) }

// Config selects and locates the hardware identity key.
type Config struct {
	// Backend selects where the key lives.
	Backend Backend
	// Dir holds the key's state (seed or key file); e.g. HOME/identity.
	// Required by tpm-sim and software.
	Dir string
	// Device is the TPM device path for the tpm backend; DefaultDevice if
	// empty.
	Device string
}

// Validate checks that c names a known backend (exactly, as ParseBackend
// returns it) and has what that backend needs.
func (c Config) Validate() error {
	switch c.Backend {
	case BackendTPM:
		return nil
	case BackendTPMSim, BackendSoftware:
		if c.Dir == "" {
			return fmt.Errorf("hwkey: backend %q needs a state directory (Config.Dir)", c.Backend)
		}
		return nil
	}
	return errUnknownBackend(string(c.Backend))
}

func (c Config) device() string {
	if c.Device == "" {
		return DefaultDevice
	}
	return c.Device
}

// Key is a P-256 signing key held by one backend.
type Key interface {
	// Backend reports where the key lives.
	Backend() Backend
	// Public returns the P-256 public key. Callers must not modify it.
	Public() *ecdsa.PublicKey
	// Sign signs a 32-byte SHA-256 digest with ECDSA and returns an ASN.1
	// DER signature that ecdsa.VerifyASN1 accepts.
	Sign(digest []byte) ([]byte, error)
	// Close releases the key's resources. Sign fails after Close.
	Close() error
}

// Open loads the key described by cfg, creating it on first use. Reopening
// the same configuration returns the same public key.
func Open(cfg Config) (Key, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Backend {
	case BackendTPM:
		return openTPM(cfg.device())
	case BackendTPMSim:
		return openSim(cfg.Dir)
	default:
		return openSoftware(cfg.Dir)
	}
}

func checkDigest(digest []byte) error {
	if len(digest) != DigestSize {
		return fmt.Errorf("hwkey: digest is %d bytes, want %d", len(digest), DigestSize)
	}
	return nil
}
