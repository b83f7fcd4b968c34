package devnet

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
)

// TestManifestOwnerOnly: devnet.json holds the buyer token, so it is 0600
// even over an older world-readable manifest and a stale temporary file.
func TestManifestOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ManifestFile)
	for _, p := range []string{path, path + ".tmp"} {
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := Manifest{Network: "n", BuyerToken: newBuyerToken(), Gateway: "http://127.0.0.1:1"}
	if err := writeManifest(path, m); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s is %v, want -rw-------", ManifestFile, st.Mode().Perm())
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left: %v", err)
	}
	b, _ := os.ReadFile(path)
	var back Manifest
	if err := json.Unmarshal(b, &back); err != nil || back.BuyerToken != m.BuyerToken || !strings.HasPrefix(back.BuyerToken, "sk-tenzro-") {
		t.Fatalf("manifest read back: %+v, %v", back, err)
	}
}

// TestPlanFourValidators: the plan `make devnet` runs (4 validators, so
// that one may fail) gives every node its own ports, names the 4 in the
// genesis, makes each validator a persistent peer of every other node and
// gives buyers' tokens to the routers only.
func TestPlanFourValidators(t *testing.T) {
	o, plans, chain := testPlan(t, Options{Network: "plan", Validators: 4, Providers: 2, Gateways: 1})
	if len(plans) != 7 || chain.chainID != "tenzro-plan" {
		t.Fatalf("%d plans, chain %q", len(plans), chain.chainID)
	}
	var genesis struct {
		Validators []json.RawMessage `json:"validators"`
	}
	b, err := os.ReadFile(filepath.Join(o.Dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &genesis); err != nil || len(genesis.Validators) != 4 {
		t.Fatalf("genesis validators: %d, %v", len(genesis.Validators), err)
	}
	seen := map[string]string{}
	claim := func(who, addr string) {
		if other, dup := seen[addr]; dup {
			t.Errorf("%s and %s share %s", who, other, addr)
		}
		seen[addr] = who
	}
	validators := 0
	for _, p := range plans {
		cfg, err := node.Load(p.entry.Home)
		if err != nil {
			t.Fatalf("%s: %v", p.entry.Name, err)
		}
		claim(p.entry.Name, cfg.API.Listen)
		for _, a := range cfg.P2P.Listen {
			claim(p.entry.Name, a)
		}
		claim(p.entry.Name, cfg.Chain.P2PListen)
		claim(p.entry.Name, cfg.Chain.RPCListen)
		wantPeers := 4
		if cfg.Role == node.RoleValidator {
			validators++
			wantPeers = 3
			if cfg.Chain.Role != consensus.ChainValidator {
				t.Errorf("%s: chain role %q", p.entry.Name, cfg.Chain.Role)
			}
			// Validators hold the devnet model for dispute committees.
			if ms := cfg.Validator.Models; len(ms) != 1 || ms[0].Dir == "" || len(ms[0].ID) != 64 {
				t.Errorf("%s: validator.models %+v, want the devnet model", p.entry.Name, ms)
			}
		}
		if len(cfg.Chain.PersistentPeers) != wantPeers {
			t.Errorf("%s: %d persistent peers, want %d: %v", p.entry.Name, len(cfg.Chain.PersistentPeers), wantPeers, cfg.Chain.PersistentPeers)
		}
		if len(cfg.P2P.Bootstrap) == 0 {
			t.Errorf("%s: no bootstrap peers", p.entry.Name)
		}
		if hasBuyer := len(cfg.Router.Buyers) > 0; hasBuyer == (cfg.Role == node.RoleProvider) {
			t.Errorf("%s (%s): buyers %v", p.entry.Name, cfg.Role, cfg.Router.Buyers)
		}
		// Every provider serves every router (4 validators + 1 gateway)
		// in full.
		if cfg.Role == node.RoleProvider && len(cfg.Provider.TrustedCallers) != 5 {
			t.Errorf("%s: trusted callers %v, want the 5 routers", p.entry.Name, cfg.Provider.TrustedCallers)
		}
	}
	if validators != 4 {
		t.Fatalf("%d validators planned", validators)
	}
}
