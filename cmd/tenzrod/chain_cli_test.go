package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/evidence"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

func TestKeysAccountNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buyer.key")
	out, err := runCLI(t, "keys", "account", "new", "--out", path)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(out)
	if len(fields) < 2 || fields[0] != "account" {
		t.Fatalf("output %q", out)
	}
	id, err := terms.ParseAccountID(fields[1])
	if err != nil {
		t.Fatalf("printed account %q: %v", fields[1], err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", st, err)
	}
	show, err := runCLI(t, "keys", "account", "show", path)
	if err != nil || !strings.Contains(show, id.String()) {
		t.Fatalf("show: %v %q, want %s", err, show, id)
	}
	if _, err := runCLI(t, "keys", "account", "new", "--out", path); err == nil {
		t.Fatal("a second `new` overwrote the key file")
	}
}

// TestGenesisForValidatorHomes writes a genesis for two validator homes
// made by `init` and checks the homes now run the chain with each other as
// peers, idle blocks every consensus.DefaultEmptyBlocksInterval, and that
// the genesis names both validators and the funded account.
func TestGenesisForValidatorHomes(t *testing.T) {
	base := t.TempDir()
	homes := []string{filepath.Join(base, "v0"), filepath.Join(base, "v1")}
	for _, h := range homes {
		if _, err := runCLI(t, "init", "--home", h, "--role", "validator", "--key-backend", "software"); err != nil {
			t.Fatal(err)
		}
	}
	funded := strings.Repeat("cd", 32)
	out, err := runCLI(t, "genesis", "--chain-id", "tenzro-cli-test", "--dir", filepath.Join(base, "net"),
		"--validator", homes[0]+"=127.0.0.1:26001", "--validator", homes[1]+"=127.0.0.1:26002", "--fund", funded+"=5000")
	if err != nil {
		t.Fatalf("genesis: %v\n%s", err, out)
	}
	genesis := filepath.Join(base, "net", "genesis.json")
	set, err := evidence.LoadValidatorSet(genesis)
	if err != nil || set.ChainID != "tenzro-cli-test" || set.Set.Size() != 2 {
		t.Fatalf("genesis validator set %+v: %v", set, err)
	}
	if b, _ := os.ReadFile(genesis); !strings.Contains(string(b), funded) {
		t.Error("genesis does not fund the account")
	}
	for i, h := range homes {
		cfg, err := node.Load(h)
		if err != nil {
			t.Fatal(err)
		}
		if !cfg.Chain.Enabled || cfg.Chain.Role != consensus.ChainValidator || len(cfg.Chain.PersistentPeers) != 1 {
			t.Fatalf("%s chain section %+v", h, cfg.Chain)
		}
		other := []string{"26002", "26001"}[i]
		if !strings.HasSuffix(cfg.Chain.PersistentPeers[0], "@127.0.0.1:"+other) {
			t.Errorf("%s peer %s, want the other validator", h, cfg.Chain.PersistentPeers[0])
		}
		if _, err := os.Stat(filepath.Join(h, "account.key")); err != nil {
			t.Errorf("no operator key: %v", err)
		}
		cc, err := cfg.Chain.NodeConfig(cfg.Path, "v")
		if err != nil || cc.EmptyBlocksInterval != consensus.DefaultEmptyBlocksInterval {
			t.Errorf("%s idle blocks every %s (%v), want %s", h, cc.EmptyBlocksInterval, err, consensus.DefaultEmptyBlocksInterval)
		}
	}
	if _, err := runCLI(t, "genesis", "--chain-id", "x", "--dir", base, "--validator", homes[0], "--fund", "nothex=1"); err == nil {
		t.Error("a bad --fund was accepted")
	}
}
