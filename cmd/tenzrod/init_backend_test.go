package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// entries lists what dir holds; a missing dir holds nothing.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	_ = filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && p != dir {
			names = append(names, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	return names
}

// TestInitRefusedFlagWritesNothing: every flag init refuses is refused
// before the model, the config, the keys or the genesis are written.
func TestInitRefusedFlagWritesNothing(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--role", "provider", "--key-backend", "software", "--region", "US-CA"}, `provider.region: region finer than a country: "US-CA"`},
		{[]string{"--role", "provider", "--key-backend", "software", "--log-level", "loud"}, "log.level"},
		{[]string{"--role", "provider", "--key-backend", "hsm"}, "identity.backend"},
		{[]string{"--role", "validator", "--api-listen", "nowhere"}, "api.listen"},
		{[]string{"--role", "provider", "--key-backend", "software", "--chain-p2p-listen", "bogus"}, "chain.p2p_listen"},
		{[]string{"--role", "auditor"}, "role"},
	} {
		home := filepath.Join(t.TempDir(), "home")
		out, err := runCLI(t, append([]string{"init", "--home", home}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("init %v: %v, want an error naming %q\n%s", c.args, err, c.want, out)
		}
		if left := entries(t, home); len(left) > 0 {
			t.Errorf("init %v refused but left %v", c.args, left)
		}
	}
}

// TestInitBackendWorksHere: a provider or validator home made without
// --key-backend gets a backend that opens on this machine (the software
// key when there is no TPM, said so), and an explicit tpm with no TPM is
// refused before anything is written. "No TPM" is a --tpm-device that
// does not exist, so the test means the same on a machine with one.
func TestInitBackendWorksHere(t *testing.T) {
	noTPM := filepath.Join(t.TempDir(), "tpmrm0")
	for _, role := range []string{"provider", "validator"} {
		home := t.TempDir()
		out, err := runCLI(t, "init", "--home", home, "--role", role, "--tpm-device", noTPM)
		if err != nil {
			t.Fatalf("init --role %s with no TPM: %v\n%s", role, err, out)
		}
		if !strings.Contains(out, "no TPM here") || !strings.Contains(out, "software (key file: NOT hardware-backed)") {
			t.Errorf("init --role %s does not say it fell back to the software key:\n%s", role, out)
		}
		cfg, err := node.Load(home)
		if err != nil || cfg.Identity.Backend != "software" {
			t.Fatalf("the %s config: backend %q, %v", role, cfg.Identity.Backend, err)
		}
		if out, err := runCLI(t, "keys", "show", "--home", home); err != nil {
			t.Fatalf("keys show of the %s home: %v\n%s", role, err, out)
		}
	}
	home := filepath.Join(t.TempDir(), "home")
	out, err := runCLI(t, "init", "--home", home, "--role", "provider", "--key-backend", "tpm", "--tpm-device", noTPM)
	if err == nil || !strings.Contains(err.Error(), "--key-backend software") || !strings.Contains(err.Error(), noTPM) {
		t.Fatalf("init --key-backend tpm with no TPM: %v, want a refusal naming the device and the alternatives\n%s", err, out)
	}
	if left := entries(t, home); len(left) > 0 {
		t.Errorf("init --key-backend tpm refused but left %v", left)
	}
}

// TestIdentityErrorOnePrefix: an identity that cannot open is reported
// with each component's prefix once ("identity: hwkey: …").
func TestIdentityErrorOnePrefix(t *testing.T) {
	home := t.TempDir()
	noTPM := filepath.Join(home, "tpmrm0")
	if out, err := runCLI(t, "init", "--home", home, "--role", "gateway"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	path := filepath.Join(home, node.ConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `backend = "software"`, `backend = "tpm"`, 1))
	b = []byte(strings.Replace(string(b), `device = "`+hwkey.DefaultDevice+`"`, `device = "`+noTPM+`"`, 1))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = runCLI(t, "keys", "show", "--home", home)
	if err == nil || !strings.HasPrefix(err.Error(), "identity: hwkey: tpm device "+noTPM) || strings.Count(err.Error(), "identity:") != 1 {
		t.Fatalf("keys show with a missing TPM: %v, want one \"identity: hwkey: tpm device …\"", err)
	}
}

// TestHelpTexts: --region is described for the role of each command, and
// tx transfer says which key funds it, as the README uses it (the faucet).
func TestHelpTexts(t *testing.T) {
	for cmd, want := range map[string]string{
		"validator": "not used by a validator",
		"join":      "not used by a gateway",
		"provider":  "the region this provider announces",
		"init":      "with --role provider",
	} {
		out, err := runCLI(t, cmd, "--help")
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("%s --help: %v; --region should say %q\n%s", cmd, err, want, out)
		}
		if cmd != "provider" && strings.Contains(out, "provider region") {
			t.Errorf("%s --help calls --region the provider region\n%s", cmd, out)
		}
	}
	out, err := runCLI(t, "tx", "transfer", "--help")
	if err != nil || !strings.Contains(out, "--key .devnet/faucet.key") || !strings.Contains(out, "funds the transfer") || strings.Contains(out, "buyer-account.key") {
		t.Errorf("tx transfer --help does not say the faucet key funds it: %v\n%s", err, out)
	}
}

// TestJoinWithoutGenesisSaysHowToPay: a gateway set up without --genesis
// says that it cannot pay, and how to set up one that does; a --deposit
// without --genesis is refused with the same directions, before a new
// home is written and on a home that follows no chain.
func TestJoinWithoutGenesisSaysHowToPay(t *testing.T) {
	sk, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "laptop")
	boot := "/ip4/127.0.0.1/tcp/4001/p2p/" + pid.String()
	refusedDeposit := func(when string) {
		t.Helper()
		out, err := runCLI(t, "join", "--home", home, "--bootstrap", boot, "--deposit", "5")
		if err == nil || !strings.Contains(err.Error(), "cannot pay providers") || !strings.Contains(err.Error(), "refused (401)") ||
			!strings.Contains(err.Error(), "--genesis genesis.json") {
			t.Fatalf("join --deposit without --genesis (%s): %v, want that it cannot pay and how to make it pay\n%s", when, err, out)
		}
	}
	refusedDeposit("a new home")
	if left := entries(t, home); len(left) > 0 {
		t.Errorf("join --deposit without --genesis refused but left %v", left)
	}
	// A plain join (no paying flags) starts, and says at start that it
	// cannot pay and how to make it pay. The context is cancelled
	// already: the message comes before the node, which then stops.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRootCmd()
	var plain bytes.Buffer
	root.SetOut(&plain)
	root.SetErr(&plain)
	root.SetArgs([]string{"join", "--home", home, "--bootstrap", boot, "--api-listen", "127.0.0.1:0", "--p2p-listen", "/ip4/127.0.0.1/tcp/0"})
	err = root.ExecuteContext(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("a plain join, stopped at once: %v\n%s", err, plain.String())
	}
	if !strings.Contains(plain.String(), "cannot pay providers") || !strings.Contains(plain.String(), "--genesis genesis.json") {
		t.Errorf("a plain join does not say it cannot pay and how to make it pay:\n%s", plain.String())
	}
	refusedDeposit("the home the plain join made")
	_, err = runCLI(t, "join", "--home", home, "--genesis", "genesis.json", "--account-key", "me.key")
	if err == nil || !strings.Contains(err.Error(), "give another --home") {
		t.Errorf("join --genesis on an existing home: %v", err)
	}
}
