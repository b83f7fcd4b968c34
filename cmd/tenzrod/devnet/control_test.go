package devnet

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestDecodeAddRequest: the control socket takes exactly one provider-N
// name, nothing that could name another directory.
func TestDecodeAddRequest(t *testing.T) {
	if r, err := DecodeAddRequest([]byte(`{"name":"provider-7"}`)); err != nil || r.Name != "provider-7" {
		t.Fatalf("a good request: %+v, %v", r, err)
	}
	for _, bad := range []string{``, `{}`, `{"name":"../provider-1"}`, `{"name":"provider-1/x"}`, `{"name":"validator-0"}`,
		`{"name":"provider-1","home":"/etc"}`, `{"name":"provider-1"} {"name":"provider-2"}`, `{"name":"provider-12345"}`, `[1]`} {
		if _, err := DecodeAddRequest([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzDecodeAddRequest: an accepted request always names a directory
// directly inside the devnet's.
func FuzzDecodeAddRequest(f *testing.F) {
	f.Add([]byte(`{"name":"provider-1"}`))
	f.Add([]byte(`{"name":"provider-1\u0000"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeAddRequest(b)
		if err != nil {
			return
		}
		if filepath.Base(r.Name) != r.Name || !strings.HasPrefix(r.Name, "provider-") || filepath.Clean(filepath.Join("/d", r.Name)) != "/d/"+r.Name {
			t.Fatalf("accepted name %q", r.Name)
		}
	})
}

// TestPlanFaucetAndProbes: the faucet's account is funded at genesis and
// --probe-interval reaches the validators' configs (0 turns probes off).
func TestPlanFaucetAndProbes(t *testing.T) {
	off := time.Duration(0)
	o, plans, chain := testPlan(t, Options{Network: "faucet", Validators: 1, Providers: 1, Gateways: 1, ProbeInterval: &off})
	key, err := consensus.ReadAccountKey(filepath.Join(o.Dir, FaucetKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if terms.AccountOf(key.Public().(ed25519.PublicKey)) != chain.faucet {
		t.Fatalf("the faucet account %s is not %s's", chain.faucet, FaucetKeyFile)
	}
	var genesis struct {
		AppState json.RawMessage `json:"app_state"`
	}
	b, err := os.ReadFile(filepath.Join(o.Dir, "genesis.json"))
	if err != nil || json.Unmarshal(b, &genesis) != nil {
		t.Fatalf("genesis: %v", err)
	}
	if !strings.Contains(string(genesis.AppState), chain.faucet.String()) {
		t.Errorf("the faucet %s is not in the genesis state", chain.faucet)
	}
	for _, p := range plans {
		cfg, err := node.Load(p.entry.Home)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Role == node.RoleValidator && cfg.Router.ProbeInterval != 0 {
			t.Errorf("%s probes every %s, want off", p.entry.Name, cfg.Router.ProbeInterval)
		}
	}
	bad := time.Duration(-1)
	o.ProbeInterval = &bad
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--probe-interval") {
		t.Errorf("a negative probe interval: %v", err)
	}
}
