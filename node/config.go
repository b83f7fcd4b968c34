package node

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/internal/tomlconf"
	"github.com/tenzrod/tenzrod/node/intake"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/node/validator"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/gateway/otlp"
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

// Config is a node's whole configuration, as read from HOME/config.toml:
// the composition of its parts' own sections. Each section's type, with
// its defaults, checks and the comments written above its keys, lives in
// the part it configures; node keeps only [log] and [api], since it owns
// the logger and the HTTP server.
type Config struct {
	Role    Role       `toml:"role" comment:"validator | provider | gateway"`
	Network string     `toml:"network" comment:"Network name. Nodes of different networks share no DHT and no topics."`
	Log     LogConfig  `toml:"log"`
	API     APIConfig  `toml:"api"`
	P2P     p2p.Config `toml:"p2p"`
	// Identity is [identity]: the hardware identity key and session
	// certificates' lifetime.
	Identity identity.Config `toml:"identity"`
	// Gossip is [gossip]; its network is the top-level network key.
	Gossip    gossip.Config         `toml:"gossip"`
	Router    RouterConfig          `toml:"router"`
	Chain     consensus.ChainConfig `toml:"chain"`
	Settle    settle.Config         `toml:"settle"`
	Telemetry otlp.Config           `toml:"telemetry"`
	// Attest is [attest]: the roots, CRLs and minimum TCB announced TEE
	// attestations are verified against.
	Attest attest.Config `toml:"attest"`
	// Validator is [validator]: the weights a validator holds for dispute
	// committees.
	Validator validator.FileConfig `toml:"validator"`
	// Provider is [provider], written only in a provider's file.
	Provider provider.Config `toml:"provider"`

	// Home is the directory the config was read from; relative paths in
	// the config are relative to it.
	Home string `toml:"-"`
}

// LogConfig selects log verbosity and format.
type LogConfig struct {
	Level  string `toml:"level" comment:"debug | info | warn | error"`
	Format string `toml:"format" comment:"text | json"`
}

// APIConfig is the HTTP API (OpenAI routes, JSON-RPC, metrics, health):
// its address, the intake's bounds and the operator's token.
type APIConfig struct {
	Listen string `toml:"listen" comment:"HTTP API: /healthz, /metrics, /rpc (JSON-RPC 2.0). Keep it on loopback unless a reverse proxy with authentication stands in front of it."`
	intake.Config
	// AdminTokenSHA256 is the SHA-256 (hex) of the operator's bearer
	// token: it may read any buyer's session (tenzro_getSession). Empty:
	// only each session's own buyer may.
	AdminTokenSHA256 string `toml:"admin_token_sha256" example:"<64 hex digits>" comment:"SHA-256 (hex) of the operator's bearer token, which may read any buyer's session (tenzro_getSession); each buyer reads its own with its token.\n  printf %s \"$TOKEN\" | sha256sum"`
}

// DefaultAPIConfig is the API's intake defaults on listen.
func DefaultAPIConfig(listen string) APIConfig {
	return APIConfig{Listen: listen, Config: intake.DefaultConfig()}
}

// Validate checks the address, the intake bounds and the token; errors
// name the key.
func (c APIConfig) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("api.listen: %q: %w", c.Listen, err))
	}
	if err := c.Config.Validate("api."); err != nil {
		errs = append(errs, err)
	}
	if t := c.AdminTokenSHA256; t != "" {
		if b, err := hex.DecodeString(t); err != nil || len(b) != sha256.Size {
			errs = append(errs, fmt.Errorf("api.admin_token_sha256: want 64 hex digits (the SHA-256 of the token), got %q", t))
		}
	}
	return errors.Join(errs...)
}

// Default returns the defaults for role; Home, ports and bootstrap peers
// are the caller's.
func Default(role Role) Config {
	pc := p2p.DefaultConfig()
	pc.KeyFile = "p2p.key"
	pc.DHTServer = role != RoleGateway
	if role == RoleValidator {
		// Validators are the public servers: they answer reachability
		// probes and relay for providers and laptops behind NAT, which
		// reserve on them (their bootstrap peers) by default.
		pc.NAT.Reachability = p2p.ReachPublic
		pc.NAT.AutoNATService = true
		pc.NAT.Relay.Enabled = true
	}
	return Config{
		Role:     role,
		Network:  "devnet",
		Log:      LogConfig{Level: "info", Format: "text"},
		API:      DefaultAPIConfig("127.0.0.1:8545"),
		P2P:      pc,
		Identity: identity.DefaultConfig(defaultBackend(role)),
		Gossip:   gossip.DefaultConfig(),
		Provider: provider.DefaultConfig(),
		Router:   gateway.DefaultRouterConfig(),
		Chain:    consensus.DefaultChainConfig(role == RoleValidator),
		Settle:   settle.DefaultConfig(),

		Telemetry: otlp.DefaultConfig(),
		Attest:    attest.DefaultConfig(),
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
	if err := tomlconf.Decode(raw, &cfg); err != nil {
		return Config{}, fmt.Errorf("config: %s: %w", path, err)
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

// HWKeyConfig returns the hardware key config, its state under the home.
func (c Config) HWKeyConfig() hwkey.Config { return c.Identity.HWKey(c.Path("identity")) }

// GossipConfig returns the gossip config on the node's network.
func (c Config) GossipConfig() gossip.Config {
	g := c.Gossip
	g.Network = c.Network
	return g
}

// settleOutbox is the gateway's outbox configuration in the node's home.
func (c Config) settleOutbox() settle.OutboxConfig {
	return c.Settle.Outbox(c.Path(filepath.Join("data", "outbox")))
}

// settleCollector is the provider's collector configuration in the home.
func (c Config) settleCollector() settle.CollectorConfig {
	return c.Settle.Collector(c.Path(filepath.Join("data", "collected")))
}

// AccountKeyFile is the operator's chain account key inside the node home
// (the devnet funds it at genesis).
const AccountKeyFile = "account.key"

// DisputeVotesFile is where a validator keeps its committed dispute
// verdicts and salts until it reveals them (relative to the home).
const DisputeVotesFile = "dispute-votes.json"

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
	if err := c.Identity.Validate(c.Path("identity")); err != nil {
		errs = append(errs, err)
	}
	if err := c.GossipConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Router.Validate(c.Chain.Enabled); err != nil {
		errs = append(errs, err)
	}
	if err := c.Validator.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Chain.Validate(string(c.Role)); err != nil {
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
	if c.Role == RoleProvider {
		if err := c.Provider.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
