package node

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// TestRouterConfigIsTheGateways: the [router] routing keys are
// gateway.Config's, with its defaults, and every one (old names kept, new
// ones added) survives a write and a load.
func TestRouterConfigIsTheGateways(t *testing.T) {
	if d := gateway.DefaultRouterConfig(); !reflect.DeepEqual(d.Config, gateway.DefaultConfig()) || d.Weights != strategy.DefaultWeights {
		t.Fatalf("router defaults %+v differ from the gateway's", d.Config)
	}
	cfg := testConfig(t, RoleGateway, "software", nil)
	cfg.Router.MaxRetries, cfg.Router.DefaultMaxTokens = 4, 2048
	cfg.Router.Weights = strategy.Weights{Price: 2, Latency: 0.5, Standing: 1, Load: 0.25}
	cfg.Router.BuyerDefaults = gateway.BuyerLimits{MaxConcurrent: 3, RatePerMinute: 90}
	cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 7,
		BuyerLimits: gateway.BuyerLimits{MaxConcurrent: 5}}}
	if err := WriteConfig(cfg, false); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(cfg.Home, ConfigFile))
	for _, key := range []string{"deadline = ", "first_token_timeout = ", "stall_timeout = ", "max_retries = 4", "default_max_tokens = 2048",
		"[router.surcharges]", "[router.weights]", "latency = 0.5", "price = 2.0", "[router.buyer_defaults]", "max_concurrent = 5", "rate_per_minute = 0"} {
		if !strings.Contains(string(raw), key) {
			t.Fatalf("config lacks %q", key)
		}
	}
	got, err := Load(cfg.Home)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Router, cfg.Router) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got.Router, cfg.Router)
	}
	gc := got.Router.GatewayConfig()
	if gc.Buyers["alice"] != (gateway.BuyerLimits{MaxConcurrent: 5}) || gc.MaxRetries != 4 {
		t.Fatalf("gateway config %+v", gc)
	}
}

// TestRouterConfigErrorsNameTheKey: one bad value at a time.
func TestRouterConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ from, to, key string }{
		{"max_retries = 2", "max_retries = 11", "router.max_retries"},
		{"default_max_tokens = 512", "default_max_tokens = 0", "router.default_max_tokens"},
		{"price = 1.0", "price = -1.0", "router.weights"},
		{"deadline = \"2m0s\"", "deadline = \"10ms\"", "router.deadline"},
		{"max_concurrent = 32", "max_concurrent = 0", "router.buyer_defaults"},
		{"rate_per_minute = 0", "rate_per_minute = -5", "router.buyers[0]"},
	} {
		cfg := testConfig(t, RoleGateway, "software", nil)
		cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken)}}
		checkEditNamed(t, cfg, c.from, c.to, c.key)
	}
}
