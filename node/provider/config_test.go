package provider

import (
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

func validConfig() Config {
	c := DefaultConfig()
	c.Region = "DE"
	c.Models = []ModelConfig{{Name: "m", Engine: EngineUpstream, UpstreamURL: "http://127.0.0.1:1", UpstreamModel: "m",
		ID: strings.Repeat("ab", 32)}}
	return c
}

// TestConfigErrorsNameTheKey: every bad caller-budget value is refused
// naming its key, and the defaults pass.
func TestConfigErrorsNameTheKey(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for key, mutate := range map[string]func(*Config){
		"provider.trusted_callers":         func(c *Config) { c.TrustedCallers = []string{"not-a-peer"} },
		"provider.unknown_concurrency":     func(c *Config) { c.UnknownConcurrency = 0 },
		"provider.unknown_rate_per_minute": func(c *Config) { c.UnknownRatePerMinute = -1 },
		"provider.max_per_peer":            func(c *Config) { c.MaxPerPeer = -1 },
		"provider.capacity":                func(c *Config) { c.Capacity = 0 },
		"provider.region":                  func(c *Config) { c.Region = "US-CA" },
	} {
		c := validConfig()
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %v does not name the key", key, err)
		}
	}
}

// TestNewNeedsItsDependencies: the role refuses to assemble without the
// parts it runs on, and a chain without the account that registers on it.
func TestNewNeedsItsDependencies(t *testing.T) {
	if _, err := New(validConfig(), Deps{}); err == nil || !strings.Contains(err.Error(), "required") {
		t.Fatalf("no deps: %v", err)
	}
	bad := validConfig()
	bad.Capacity = 0
	if _, err := New(bad, Deps{}); err == nil || !strings.Contains(err.Error(), "provider.capacity") {
		t.Fatalf("bad config: %v", err)
	}
}

// TestUpstreamRefusesOptimistic: an upstream model cannot announce a level
// that needs logit commitments; the error names the key.
func TestUpstreamRefusesOptimistic(t *testing.T) {
	c := validConfig()
	c.Models[0].Verification = []terms.Verification{terms.VerifyNone, terms.VerifyOptimistic}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "provider.models[0]: verification") || !strings.Contains(err.Error(), "optimistic") {
		t.Fatalf("optimistic on an upstream model: %v", err)
	}
	c.Models[0].Verification = []terms.Verification{terms.VerifyNone, terms.VerifyReceipt}
	if err := c.Validate(); err != nil {
		t.Fatalf("none and receipt on an upstream model: %v", err)
	}
}

// TestUpstreamContinuationMode: continuation takes one of three modes on
// an upstream model, defaulting to an assistant prefix, and is refused on
// an embedded one.
func TestUpstreamContinuationMode(t *testing.T) {
	c := validConfig()
	if got := c.Models[0].ContinuationMode(); got != "assistant_prefix" {
		t.Fatalf("default mode %q", got)
	}
	c.Models[0].Continuation = "prefix"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "provider.models[0]: continuation") {
		t.Fatalf("bad mode: %v", err)
	}
	c.Models[0].Continuation = "none"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	e := DevnetModel("m", "")
	e.Continuation = "none"
	c.Models = []ModelConfig{e}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "continuation") {
		t.Fatalf("continuation on an embedded model: %v", err)
	}
}
