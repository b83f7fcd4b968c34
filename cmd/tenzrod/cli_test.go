package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestInitWritesConfigAndKeys(t *testing.T) {
	home := t.TempDir()
	out, err := runCLI(t, "init", "--home", home, "--role", "provider", "--key-backend", "tpm-sim", "--region", "JP", "--api-listen", "127.0.0.1:9999")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"peer id", "machine id", "tpm-sim (TPM simulator"} {
		if !strings.Contains(out, w) {
			t.Errorf("init output lacks %q:\n%s", w, out)
		}
	}
	raw, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`role = "provider"`, `region = "JP"`, `listen = "127.0.0.1:9999"`, "# Coarse region only", "[[provider.models]]"} {
		if !strings.Contains(string(raw), w) {
			t.Errorf("config lacks %q", w)
		}
	}
	for _, f := range []string{"p2p.key", "identity/hwkey-tpm-sim.seed"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Errorf("init did not create %s: %v", f, err)
		}
	}
	first := machineLine(out)
	keys, err := runCLI(t, "keys", "show", "--home", home)
	if err != nil {
		t.Fatal(err)
	}
	if machineLine(keys) != first || !strings.Contains(keys, "ml-dsa-65") {
		t.Fatalf("keys show disagrees with init:\n%s\n%s", out, keys)
	}
	if _, err := runCLI(t, "init", "--home", home, "--role", "provider"); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second init: %v", err)
	}
}

func machineLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "machine id") {
			return strings.Fields(l)[2]
		}
	}
	return ""
}

func TestRunRefusesBadConfig(t *testing.T) {
	home := t.TempDir()
	if _, err := runCLI(t, "init", "--home", home, "--role", "provider", "--key-backend", "software"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, "config.toml")
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(raw), "capacity = 4", "capacity = 0", 1)), 0o600)
	_, err := runCLI(t, "provider", "--home", home)
	if err == nil || !strings.Contains(err.Error(), "provider.capacity") {
		t.Fatalf("bad capacity: %v", err)
	}
	if _, err := runCLI(t, "validator", "--home", home); err == nil || !strings.Contains(err.Error(), "role") {
		t.Fatalf("validator on a provider home: %v", err)
	}
	if _, err := runCLI(t, "provider", "--home", t.TempDir()); err == nil || !strings.Contains(err.Error(), "tenzrod init") {
		t.Fatalf("missing config: %v", err)
	}
	if _, err := runCLI(t, "init", "--home", t.TempDir(), "--role", "miner"); err == nil || !strings.Contains(err.Error(), "role") {
		t.Fatalf("bad role: %v", err)
	}
}

func TestJoinNeedsBootstrapFirstTime(t *testing.T) {
	_, err := runCLI(t, "join", "--home", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "--bootstrap") {
		t.Fatalf("join without bootstrap: %v", err)
	}
}
