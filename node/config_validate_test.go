package node

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node/validator"
)

// TestValidateNamesEachKey: Config.Validate reports a bad value in any
// part's section by its full key, the section's own checks reached
// through node.Config.
func TestValidateNamesEachKey(t *testing.T) {
	for _, c := range []struct {
		key string
		mod func(*Config)
	}{
		{"role", func(c *Config) { c.Role = "miner" }},
		{"home", func(c *Config) { c.Home = "" }},
		{"log.format", func(c *Config) { c.Log.Format = "xml" }},
		{"api.body_slots", func(c *Config) { c.API.BodySlots = 0 }},
		{"api.body_grace", func(c *Config) { c.API.BodyGrace = time.Hour }},
		{"api.body_timeout", func(c *Config) { c.API.BodyTimeout = 0 }},
		{"api.body_min_rate", func(c *Config) { c.API.BodyMinRate = -1 }},
		{"api.admin_token_sha256", func(c *Config) { c.API.AdminTokenSHA256 = "abc" }},
		{"identity.session_ttl", func(c *Config) { c.Identity.SessionTTL = 0 }},
		{"gossip.window", func(c *Config) { c.Gossip.Window = time.Hour }},
		{"router.deadline", func(c *Config) { c.Router.Deadline = 0 }},
		{"router.probe_interval", func(c *Config) { c.Router.ProbeInterval = time.Millisecond }},
		{"router.durability", func(c *Config) { c.Router.Durability = "never" }},
		{"router.tokenizers[0]", func(c *Config) { c.Router.Tokenizers = []TokenizerConfig{{Dir: "x", ID: "zz"}} }},
		{"router.buyers[0]", func(c *Config) { c.Router.Buyers = []BuyerConfig{{Account: "a", TokenSHA256: "short"}} }},
		{"router.buyers[1]: \"a\" listed twice", func(c *Config) {
			c.Router.Buyers = []BuyerConfig{{Account: "a", TokenSHA256: TokenHash("x")}, {Account: "a", TokenSHA256: TokenHash("y")}}
		}},
		{"router.buyers[0].payer: required on a chain", func(c *Config) {
			c.Chain.Enabled, c.Router.Buyers = true, []BuyerConfig{{Account: "a", TokenSHA256: TokenHash("x")}}
		}},
		{"chain.role", func(c *Config) { c.Chain.Role = consensus.ChainValidator }},
		{"chain.block_time", func(c *Config) { c.Chain.BlockTime = time.Hour }},
		{"settle.grace", func(c *Config) { c.Settle.Grace = -time.Second }},
		{"settle.collect_interval", func(c *Config) { c.Settle.CollectInterval = 0 }},
		{"telemetry.protocol", func(c *Config) { c.Telemetry.Protocol = "udp" }},
		{"telemetry.sample_ratio", func(c *Config) { c.Telemetry.SampleRatio = math.NaN() }},
		{"telemetry.otlp_endpoint", func(c *Config) { c.Telemetry.OTLPEndpoint = "ftp://x" }},
		{"attest.cache_size", func(c *Config) { c.Attest.CacheSize = -1 }},
		{"attest.min_tcb.ucode_spl", func(c *Config) { c.Attest.MinTCB.UcodeSpl = 256 }},
		{"attest.crls[0]", func(c *Config) { c.Attest.CRLs = []string{"missing.crl"} }},
		{"validator.models[0].dir", func(c *Config) { c.Validator.Models = []validator.ModelConfig{{Name: "m"}} }},
		{"provider.capacity", func(c *Config) { c.Provider.Capacity = 0 }},
		{"provider.record_wait", func(c *Config) { c.Provider.RecordWait = time.Hour }},
	} {
		cfg := testConfig(t, RoleProvider, "software", nil)
		c.mod(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: %v, want it named", c.key, err)
		}
	}
}
