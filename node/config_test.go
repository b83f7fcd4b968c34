package node

import (
	"github.com/tenzrod/tenzrod/receipts/terms"

	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestConfigRoundTrip(t *testing.T) {
	for _, role := range []Role{RoleValidator, RoleProvider, RoleGateway} {
		cfg := testConfig(t, role, "software", []string{"/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWGzBQHvCmHEh5dC6b9c1jTbtXpsjqovfDD7bHTCGWRGZ2"})
		if role == RoleProvider {
			// An upstream model's keys survive the round trip too.
			cfg.Provider.Models = append(cfg.Provider.Models, ModelConfig{Name: "fronted", Engine: EngineUpstream,
				ID: strings.Repeat("ab", 32), UpstreamURL: "http://127.0.0.1:8080/v1", UpstreamModel: "m", Continuation: "none",
				Verification: []terms.Verification{terms.VerifyNone}})
			// So does an expert-token rate, on a model whose experts run
			// at holders.
			cfg.Provider.Models[0].RateCard.ExpertTokens = 2
			cfg.Provider.RemoteExperts.Models = []string{cfg.Provider.Models[0].Name}
		}
		if err := WriteConfig(cfg, false); err != nil {
			t.Fatal(err)
		}
		got, err := Load(cfg.Home)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, cfg) {
			t.Fatalf("%s: round trip changed the config:\n got %+v\nwant %+v", role, got, cfg)
		}
		if err := WriteConfig(cfg, false); err == nil || !strings.Contains(err.Error(), "--force") {
			t.Fatalf("overwrite without force: %v", err)
		}
	}
}

// TestConfigErrorsNameTheKey edits one key of a valid file at a time and
// expects the error to name that key.
func TestConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct{ from, to, key string }{
		{`role = "provider"`, `role = "miner"`, "role"},
		{`level = "info"`, `level = "loud"`, "log.level"},
		{`listen = "127.0.0.1:0"`, `listen = "nowhere"`, "api.listen"},
		{`conn_low = 64`, `conn_low = 0`, "p2p.conn_low"},
		{`backend = "software"`, `backend = "hsm"`, "identity.backend"},
		{`window = "30s"`, `window = "1h"`, "gossip.window"},
		{`region = "DE"`, `region = "US-CA"`, "provider.region"},
		{`capacity = 4`, `capacity = 0`, "provider.capacity"},
		{`verification = ["none", "receipt", "optimistic"]`, `verification = ["blind-trust"]`, "provider.models[0]"},
		{`engine = "embedded"`, "engine = \"embedded\"\nenigne = 1", "enigne"},
		{`session_ttl = "24h0m0s"`, `session_ttl = "soon"`, "session_ttl"},
		{`validity = 300`, `validity = 1`, "settle.validity"},
		{`state_versions = 1000`, `state_versions = 1`, "chain.state_versions"},
		{`collect_batch = 100`, `collect_batch = 0`, "settle.collect_batch"},
		{`record_wait = "3s"`, `record_wait = "1h"`, "provider.record_wait"},
		{`idle_timeout = "30m0s"`, `idle_timeout = "1s"`, "router.sessions.idle_timeout"},
		{`max_sessions = 10000`, `max_sessions = 0`, "router.sessions.max_sessions"},
		{`standby_horizon = "1h0m0s"`, `standby_horizon = "10000h"`, "router.sessions.standby_horizon"},
		{`challenge_interval = "1m0s"`, `challenge_interval = "2h"`, "router.sessions.challenge_interval"},
	}
	for _, c := range cases {
		checkEditNamed(t, testConfig(t, RoleProvider, "software", nil), c.from, c.to, c.key)
	}
}

// checkEditNamed writes cfg, replaces from with to in the written file,
// and expects loading and validating it to fail naming want.
func checkEditNamed(t *testing.T, cfg Config, from, to, want string) {
	t.Helper()
	if err := WriteConfig(cfg, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfg.Home, ConfigFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), from) {
		t.Fatalf("written file lacks %q", from)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(raw), from, to, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(cfg.Home)
	if err == nil {
		err = loaded.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s → %s: error %v does not name %q", from, to, err, want)
	}
}

// FuzzLoadConfig: any config file content gives a config or an error, never
// a panic, and a config that loads and validates renders back to one that
// loads to the same value.
func FuzzLoadConfig(f *testing.F) {
	cfg := Default(RoleProvider)
	cfg.Provider.Models = []ModelConfig{DevnetModel("models/m", "")}
	seed, _ := RenderConfig(cfg)
	f.Add(string(seed))
	f.Add("role = \"gateway\"\n[api]\nlisten = \"x\"\n")
	f.Add("[[provider.models]]\nname = 1\n")
	f.Fuzz(func(t *testing.T, content string) {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(home)
		if err != nil {
			return
		}
		if c.Validate() != nil {
			return
		}
		out, err := RenderConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ConfigFile), out, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(home); err != nil {
			t.Fatalf("re-rendered valid config does not load: %v\n%s", err, out)
		}
	})
}
