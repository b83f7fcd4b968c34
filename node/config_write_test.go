package node

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/tenzrod/tenzrod/internal/tomlconf"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/node/validator"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/gateway/otlp"
)

// fullConfig is a provider's config with every optional section filled:
// each array of tables has an entry, so every key is written uncommented.
func fullConfig(t *testing.T) Config {
	t.Helper()
	cfg := testConfig(t, RoleProvider, "software", []string{"/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWGzBQHvCmHEh5dC6b9c1jTbtXpsjqovfDD7bHTCGWRGZ2"})
	testRoots(t, &cfg)
	cfg.API.AdminTokenSHA256 = strings.Repeat("cd", 32)
	cfg.Telemetry.OTLPEndpoint = "http://127.0.0.1:4318"
	cfg.Telemetry.Protocol = otlp.ProtocolHTTP
	cfg.Router.Buyers = []BuyerConfig{
		{Payer: strings.Repeat("ef", 32), TokenSHA256: TokenHash("a"), BuyerLimits: gateway.BuyerLimits{MaxConcurrent: 3, RatePerMinute: 60}},
		{Account: "alice", InitialCredit: 1_000, TokenSHA256: TokenHash("b")},
	}
	cfg.Router.Tokenizers = []TokenizerConfig{{Dir: "models/tok", ID: strings.Repeat("12", 32)}}
	cfg.Router.Surcharges.TEE = 33
	cfg.Validator.Models = []validator.ModelConfig{{Name: "held", Dir: "models/held", ID: strings.Repeat("34", 32)}}
	cfg.Attest.MinTCB.SnpSpl = 8
	cfg.Provider.Models = append(cfg.Provider.Models, provider.ModelConfig{Name: "fronted", Engine: provider.EngineUpstream,
		ID: strings.Repeat("ab", 32), UpstreamURL: "http://127.0.0.1:8080/v1", UpstreamModel: "m", Continuation: "none",
		Verification: []terms.Verification{terms.VerifyNone}})
	cfg.Provider.Models[0].RateCard.ExpertTokens = 2
	cfg.Provider.RemoteExperts.Models = []string{cfg.Provider.Models[0].Name}
	cfg.Provider.Experts = []provider.ExpertConfig{{Model: strings.Repeat("56", 32), Dir: "models/moe", Layers: []uint32{0, 1}, Experts: []uint32{2, 5}, PricePerToken: 7}}
	cfg.Provider.TrustedCallers = []string{"12D3KooWGzBQHvCmHEh5dC6b9c1jTbtXpsjqovfDD7bHTCGWRGZ2"}
	cfg.Provider.Standby.Enabled = true
	return cfg
}

// roundTrip writes cfg and loads it back.
func roundTrip(t *testing.T, cfg Config) Config {
	t.Helper()
	if err := WriteConfig(cfg, true); err != nil {
		t.Fatal(err)
	}
	got, err := Load(cfg.Home)
	if err != nil {
		raw, _ := os.ReadFile(filepath.Join(cfg.Home, ConfigFile))
		t.Fatalf("load: %v\n%s", err, raw)
	}
	return got
}

// sameConfig compares configs with an empty list equal to none: a nil
// list is written as [] and read back empty, which means the same.
func sameConfig(a, b Config) bool {
	na, nb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	emptyToNil(na)
	emptyToNil(nb)
	return reflect.DeepEqual(a, b)
}

func emptyToNil(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				emptyToNil(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.Zero(v.Type()))
		}
		for i := range v.Len() {
			emptyToNil(v.Index(i))
		}
	case reflect.Map:
		if v.Len() == 0 {
			v.Set(reflect.Zero(v.Type()))
		}
	}
}

// TestWrittenConfigLoadsBack: what init writes for each role, and a config
// with every optional section filled, loads back to the same Config.
func TestWrittenConfigLoadsBack(t *testing.T) {
	for _, role := range []Role{RoleValidator, RoleProvider, RoleGateway} {
		cfg := Default(role)
		cfg.Home = t.TempDir()
		if role == RoleProvider {
			cfg.Provider.Models = []provider.ModelConfig{provider.DevnetModel("models/devnet", strings.Repeat("ab", 32))}
		}
		if got := roundTrip(t, cfg); !sameConfig(got, cfg) {
			t.Errorf("%s: round trip changed the config:\n got %+v\nwant %+v", role, got, cfg)
		}
	}
	full := fullConfig(t)
	if got := roundTrip(t, full); !sameConfig(got, full) {
		t.Errorf("full config: round trip changed it:\n got %+v\nwant %+v", got, full)
	}
}

// TestEveryFieldIsWritten walks node.Config by reflection: every key a
// struct field gives is in the file written for a full config, and the
// file has no key the structs lack.
func TestEveryFieldIsWritten(t *testing.T) {
	cfg := fullConfig(t)
	if err := WriteConfig(cfg, false); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if _, err := toml.DecodeFile(filepath.Join(cfg.Home, ConfigFile), &doc); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	structKeys(reflect.TypeOf(cfg), "", &want)
	docKeys(doc, "", &got)
	slices.Sort(want)
	slices.Sort(got)
	got = slices.Compact(got)
	if len(want) < 100 {
		t.Fatalf("only %d keys found in node.Config: the walk is broken", len(want))
	}
	for _, k := range want {
		if _, ok := slices.BinarySearch(got, k); !ok {
			t.Errorf("field key %s is not in the written file", k)
		}
	}
	for _, k := range got {
		if _, ok := slices.BinarySearch(want, k); !ok {
			t.Errorf("written key %s has no struct field", k)
		}
	}
}

// structKeys lists the dotted leaf keys of a struct type, as the decoder
// maps them: embedded structs flattened, arrays of tables by their key.
func structKeys(t reflect.Type, prefix string, out *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		ft := f.Type
		if f.Anonymous && tag == "" && ft.Kind() == reflect.Struct {
			structKeys(ft, prefix, out)
			continue
		}
		key := prefix + tag
		switch {
		case tomlconf.IsTable(ft):
			structKeys(ft, key+".", out)
		case tomlconf.IsTableArray(ft):
			structKeys(ft.Elem(), key+".", out)
		default:
			*out = append(*out, key)
		}
	}
}

// docKeys lists the dotted leaf keys of a decoded TOML document.
func docKeys(m map[string]any, prefix string, out *[]string) {
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			docKeys(v, prefix+k+".", out)
		case []map[string]any:
			for _, e := range v {
				docKeys(e, prefix+k+".", out)
			}
		default:
			*out = append(*out, prefix+k)
		}
	}
}

// TestEmptyArraysWriteAnExample: an array of tables with no entry is
// written as a commented-out entry, so its keys are on the page, and a
// section another role does not use is left out.
func TestEmptyArraysWriteAnExample(t *testing.T) {
	for _, c := range []struct {
		role       Role
		has, lacks []string
	}{
		{RoleGateway, []string{"# [[router.buyers]]\n# payer = ", "# [[router.tokenizers]]", "# [[attest.roots]]", "# admin_token_sha256 = \"<64 hex digits>\""}, []string{"[provider]", "validator.models"}},
		{RoleValidator, []string{"# [[validator.models]]\n# name = ", "# [[router.buyers]]"}, []string{"[provider]"}},
		{RoleProvider, []string{"# [[provider.models]]\n# name = ", "# [[provider.experts]]", "[provider.remote_experts]"}, []string{"# [[router.buyers]]", "validator.models"}},
	} {
		b, err := RenderConfig(Default(c.role))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.has {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s: written file lacks %q", c.role, s)
			}
		}
		for _, s := range c.lacks {
			if strings.Contains(string(b), s) {
				t.Errorf("%s: written file has %q", c.role, s)
			}
		}
	}
	if _, err := tomlconf.Render("", attest.DefaultConfig(), nil); err != nil {
		t.Errorf("a part's section alone: %v", err)
	}
}

// TestUnknownKeyNamed: a key no struct has is refused, naming it with its
// table, wherever it is.
func TestUnknownKeyNamed(t *testing.T) {
	for _, c := range []struct{ after, key string }{
		{"network = \"test\"\n", "colour"},
		{"[router]\n", "router.colour"},
		{"[router.sessions]\n", "router.sessions.colour"},
		{"[attest.min_tcb]\n", "attest.min_tcb.colour"},
		{"[[provider.models]]\n", "provider.models.colour"},
		{"[provider.standby]\n", "provider.standby.colour"},
		{"[gossip]\n", "gossip.colour"},
	} {
		checkEditNamed(t, fullConfig(t), c.after, c.after+"colour = 1\n", "unknown key(s): "+c.key)
	}
}
