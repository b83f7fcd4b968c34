package node

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// Role is what a node does in the network.
type Role string

const (
	RoleValidator Role = "validator"
	RoleProvider  Role = "provider"
	RoleGateway   Role = "gateway"
)

// ConfigFile is the config file name inside a node's home directory.
const ConfigFile = "config.toml"

// Config is a node's whole configuration, as read from HOME/config.toml.
type Config struct {
	Role     Role           `toml:"role"`
	Network  string         `toml:"network"`
	Log      LogConfig      `toml:"log"`
	API      APIConfig      `toml:"api"`
	P2P      p2p.Config     `toml:"p2p"`
	Identity IdentityConfig `toml:"identity"`
	Gossip   GossipConfig   `toml:"gossip"`
	Provider ProviderConfig `toml:"provider"`
	Router   RouterConfig   `toml:"router"`
	// Validator is [validator]: the weights a validator holds for dispute
	// committees.
	Validator ValidatorConfig `toml:"validator"`
	Chain     ChainConfig     `toml:"chain"`
	Settle    SettleConfig    `toml:"settle"`
	// Telemetry: traces of routed requests over OTLP (off by default).
	Telemetry TelemetryConfig `toml:"telemetry"`
	// Attest is [attest]: the roots, CRLs and minimum TCB announced TEE
	// attestations are verified against (config_attest.go).
	Attest AttestConfig `toml:"attest"`

	// Home is the directory the config was read from; relative paths in
	// the config are relative to it.
	Home string `toml:"-"`
}

// LogConfig selects log verbosity and format.
type LogConfig struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
}

// APIConfig is the HTTP API (OpenAI routes, JSON-RPC, metrics, health).
type APIConfig struct {
	Listen string `toml:"listen"`
	// BodySlots is how many request bodies the OpenAI routes read at once
	// (with their 4 MB cap, about 128 MB in flight at 32); RPCBodySlots is
	// JSON-RPC's own pool, which clients without a token use.
	BodySlots    int `toml:"body_slots"`
	RPCBodySlots int `toml:"rpc_body_slots"`
	// BodySlotsPerClient is the most slots of a pool one client address
	// (an IPv4 address, an IPv6 /64) holds at once.
	BodySlotsPerClient int `toml:"body_slots_per_client"`
	// BodyMinRate is the slowest a body may arrive, in bytes a second
	// on average after BodyGrace; BodyTimeout bounds a whole body.
	BodyMinRate int64         `toml:"body_min_rate"`
	BodyGrace   time.Duration `toml:"body_grace"`
	BodyTimeout time.Duration `toml:"body_timeout"`
	// AdminTokenSHA256 is the SHA-256 (hex) of the operator's bearer
	// token: it may read any buyer's session (tenzro_getSession). Empty:
	// only each session's own buyer may.
	AdminTokenSHA256 string `toml:"admin_token_sha256"`
}

// DefaultAPIConfig is the API's intake defaults on listen.
func DefaultAPIConfig(listen string) APIConfig {
	return APIConfig{Listen: listen, BodySlots: 32, RPCBodySlots: 8, BodySlotsPerClient: 8,
		BodyMinRate: 16 << 10, BodyGrace: 2 * time.Second, BodyTimeout: 30 * time.Second}
}

// Validate checks the intake bounds; errors name the key.
func (c APIConfig) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("api.listen: %q: %w", c.Listen, err))
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"api.body_slots", c.BodySlots}, {"api.rpc_body_slots", c.RPCBodySlots}, {"api.body_slots_per_client", c.BodySlotsPerClient}} {
		if k.v < 1 || k.v > 4096 {
			errs = append(errs, fmt.Errorf("%s: %d outside 1..4096", k.key, k.v))
		}
	}
	if c.BodyMinRate < 0 {
		errs = append(errs, fmt.Errorf("api.body_min_rate: %d is negative (0 turns the minimum rate off)", c.BodyMinRate))
	}
	if c.BodyGrace < 0 || c.BodyGrace > time.Minute {
		errs = append(errs, fmt.Errorf("api.body_grace: %s outside 0..1m", c.BodyGrace))
	}
	if c.BodyTimeout < time.Second || c.BodyTimeout > 10*time.Minute {
		errs = append(errs, fmt.Errorf("api.body_timeout: %s outside 1s..10m", c.BodyTimeout))
	}
	if t := c.AdminTokenSHA256; t != "" {
		if b, err := hex.DecodeString(t); err != nil || len(b) != sha256.Size {
			errs = append(errs, fmt.Errorf("api.admin_token_sha256: want 64 hex digits (the SHA-256 of the token), got %q", t))
		}
	}
	return errors.Join(errs...)
}

// IdentityConfig selects the hardware identity key.
type IdentityConfig struct {
	Backend    string        `toml:"backend"`
	Device     string        `toml:"device"`
	SessionTTL time.Duration `toml:"session_ttl"`
}

// GossipConfig tunes message admission.
type GossipConfig struct {
	Window time.Duration `toml:"window"`
}

// Default returns the defaults for role; Home, ports and bootstrap peers
// are the caller's.
func Default(role Role) Config {
	pc := p2p.DefaultConfig()
	pc.KeyFile = "p2p.key"
	pc.DHTServer = role != RoleGateway
	return Config{
		Role:     role,
		Network:  "devnet",
		Log:      LogConfig{Level: "info", Format: "text"},
		API:      DefaultAPIConfig("127.0.0.1:8545"),
		P2P:      pc,
		Identity: IdentityConfig{Backend: string(defaultBackend(role)), Device: hwkey.DefaultDevice, SessionTTL: 24 * time.Hour},
		Gossip:   GossipConfig{Window: gossip.DefaultWindow},
		Provider: DefaultProviderConfig(),
		Router:   DefaultRouterConfig(),
		Chain:    DefaultChainConfig(role),
		Settle:   DefaultSettleConfig(),

		Telemetry: DefaultTelemetryConfig(),
		Attest:    DefaultAttestConfig(),
	}
}

// defaultBackend: a laptop gateway has no TPM to rely on, so it uses the
// software key (and says so everywhere); server roles expect a TPM.
func defaultBackend(role Role) hwkey.Backend {
	if role == RoleGateway {
		return hwkey.BackendSoftware
	}
	return hwkey.BackendTPM
}

// Load reads HOME/config.toml over the role's defaults. Unknown keys are
// errors, so a typo never silently falls back to a default.
func Load(home string) (Config, error) {
	path := filepath.Join(home, ConfigFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w (run `tenzrod init --home %s --role ROLE` first)", err, home)
	}
	var probe struct {
		Role Role `toml:"role"`
	}
	if _, err := toml.Decode(string(raw), &probe); err != nil {
		return Config{}, fmt.Errorf("config: %s: %w", path, err)
	}
	cfg := Default(probe.Role)
	md, err := toml.Decode(string(raw), &cfg)
	if err != nil {
		return Config{}, fmt.Errorf("config: %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return Config{}, fmt.Errorf("config: %s: unknown key(s): %s", path, strings.Join(keys, ", "))
	}
	cfg.Home = home
	return cfg, nil
}

// Path resolves p relative to the node's home.
func (c Config) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Home, p)
}

// P2PConfig returns the libp2p config with the network and paths resolved.
func (c Config) P2PConfig() p2p.Config {
	pc := c.P2P
	pc.Network = c.Network
	pc.KeyFile = c.Path(pc.KeyFile)
	return pc
}

// HWKeyConfig returns the hardware key config.
func (c Config) HWKeyConfig() hwkey.Config {
	return hwkey.Config{Backend: hwkey.Backend(c.Identity.Backend), Dir: c.Path("identity"), Device: c.Identity.Device}
}

// Validate checks every section and names the offending key.
func (c Config) Validate() error {
	var errs []error
	switch c.Role {
	case RoleValidator, RoleProvider, RoleGateway:
	default:
		errs = append(errs, fmt.Errorf("role: %q is not one of validator, provider, gateway", c.Role))
	}
	if c.Home == "" {
		errs = append(errs, errors.New("home: not set"))
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log.level: %q is not one of debug, info, warn, error", c.Log.Level))
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log.format: %q is not one of text, json", c.Log.Format))
	}
	if err := c.API.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.P2PConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if b, err := hwkey.ParseBackend(c.Identity.Backend); err != nil {
		errs = append(errs, fmt.Errorf("identity.backend: %w", err))
	} else if err := c.HWKeyConfig().Validate(); err != nil && b != "" {
		errs = append(errs, fmt.Errorf("identity: %w", err))
	}
	if c.Identity.SessionTTL < time.Minute || c.Identity.SessionTTL > 30*24*time.Hour {
		errs = append(errs, fmt.Errorf("identity.session_ttl: %s outside 1m..720h", c.Identity.SessionTTL))
	}
	if c.Gossip.Window < time.Second || c.Gossip.Window > 10*time.Minute {
		errs = append(errs, fmt.Errorf("gossip.window: %s outside 1s..10m", c.Gossip.Window))
	}
	if err := c.Router.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Validator.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Chain.Validate(c.Role); err != nil {
		errs = append(errs, err)
	}
	if err := c.Settle.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Telemetry.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Attest.Policy(c.Path); err != nil {
		errs = append(errs, err)
	}
	for i, b := range c.Router.Buyers {
		if c.Chain.Enabled && b.Payer == "" {
			errs = append(errs, fmt.Errorf("router.buyers[%d].payer: required on a chain: calls are paid from the payer's on-chain escrow (off-chain account %q pays nothing)", i, b.Account))
		}
	}
	if c.Role == RoleProvider {
		if err := c.Provider.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
