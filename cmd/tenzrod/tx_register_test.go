package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// printedField returns the value after label at the start of a line.
func printedField(t *testing.T, out, label string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == label {
			return f[1]
		}
	}
	t.Fatalf("no %q line in:\n%s", label, out)
	return ""
}

// testTxRegister registers a provider home made by `init` with the funded
// operator key op (holding 1.5e9), checks the chain has it as given, that
// another account cannot take the machine, and unbonds and withdraws it.
func testTxRegister(t *testing.T, n *txNet, opKey string, op terms.AccountID) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "provider")
	if out, err := runCLI(t, "init", "--home", home, "--role", "provider", "--key-backend", "software"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	cfg, err := node.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	peerID, err := p2p.PeerIDFromKeyFile(cfg.P2PConfig().KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	before := n.balance(t, op)
	out := mustTx(t, "register", "--api", n.api, "--home", home, "--key", opKey, "--bond", "1000000000", "--unbonding", "0s")
	machine, err := identity.ParseMachineID(printedField(t, out, "machine"))
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := n.node.Chain().Provider(ctx, machine)
	if err != nil || !ok {
		t.Fatalf("machine %s not registered: %v", machine, err)
	}
	if p.Operator != op || p.PeerID != peerID.String() || p.Bond != 1_000_000_000 || p.UnbondingSecs != 0 {
		t.Fatalf("registration %+v, want operator %s peer %s bond 1e9", p, op, peerID)
	}
	if got := n.balance(t, op); got != before-1_000_000_000 {
		t.Fatalf("operator balance %d after bonding, want %d", got, before-1_000_000_000)
	}

	// Another account cannot take the machine, whatever it signs with.
	out, err = runCLI(t, "tx", "register", "--api", n.api, "--home", home, "--key", n.buyerKey)
	if err == nil || !strings.Contains(err.Error(), "machine taken") {
		t.Fatalf("a second operator registering the machine: %v\n%s", err, out)
	}

	mustTx(t, "unbond", "--api", n.api, "--key", opKey, "--machine", machine.String())
	if p, _, err := n.node.Chain().Provider(ctx, machine); err != nil || p.UnbondAt == 0 {
		t.Fatalf("after unbond: %+v %v", p, err)
	}
	mustTx(t, "withdraw-bond", "--api", n.api, "--key", opKey, "--machine", machine.String())
	if _, ok, err := n.node.Chain().Provider(ctx, machine); err != nil || ok {
		t.Fatalf("after withdraw-bond the machine is still registered (%v)", err)
	}
	if got := n.balance(t, op); got != before {
		t.Fatalf("operator balance %d after the bond came back, want %d", got, before)
	}
}

// TestTxBadFlags: every malformed flag is refused before anything is
// signed, with an error naming the flag.
func TestTxBadFlags(t *testing.T) {
	key := filepath.Join(t.TempDir(), "k.key")
	if _, err := consensus.NewAccountKey(key); err != nil {
		t.Fatal(err)
	}
	to := strings.Repeat("ab", 32)
	// An API nobody listens on: a check that wrongly passed would fail
	// differently (node unreachable), not name the flag.
	api := "http://127.0.0.1:1"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"transfer", "--key", key, "--to", to, "--amount", "1.5"}, `"--amount" flag: "1.5" is not an integer`},
		{[]string{"transfer", "--key", key, "--to", to, "--amount", "-5"}, `"--amount" flag: "-5" is negative`},
		{[]string{"transfer", "--key", key, "--to", to, "--amount=-5"}, `"--amount" flag: "-5" is negative`},
		{[]string{"transfer", "--key", key, "--to", to, "--amount", "0"}, `"--amount" flag: "0" is zero`},
		{[]string{"transfer", "--key", key, "--to", to, "--amount", "1e9"}, `"--amount" flag`},
		{[]string{"transfer", "--key", key, "--to", to, "--amount", "18446744073709551616"}, `"--amount" flag`},
		{[]string{"transfer", "--key", key, "--to", to}, "--amount is required"},
		{[]string{"transfer", "--key", key, "--amount", "5"}, "--to is required"},
		{[]string{"transfer", "--key", key, "--to", "bob", "--amount", "5"}, `--to "bob"`},
		{[]string{"transfer", "--to", to, "--amount", "5"}, "--key is required"},
		{[]string{"transfer", "--key", key + ".missing", "--to", to, "--amount", "5"}, "--key:"},
		{[]string{"transfer", "--key", key, "--to", to, "--amount", "5", "--wait", "-1s"}, "--wait -1s"},
		{[]string{"transfer", "--key", key, "--to", to, "--amount", "5", "--api", "ftp://x"}, "--api:"},
		{[]string{"escrow", "fund", "--key", key, "--amount", "2.0"}, `"--amount" flag`},
		{[]string{"escrow", "fund", "--key", key, "--amount", "2", "--settler", "x"}, `--settler "x"`},
		{[]string{"escrow", "withdraw", "--key", key}, "--amount is required"},
		{[]string{"register", "--key", key}, "--home is required"},
		{[]string{"register", "--key", key, "--home", t.TempDir(), "--bond", "-1"}, `"--bond" flag`},
		{[]string{"register", "--key", key, "--home", t.TempDir(), "--unbonding", "1.5s"}, "--unbonding 1.5s"},
		{[]string{"register", "--key", key, "--home", filepath.Join(t.TempDir(), "none")}, "--home"},
		{[]string{"unbond", "--key", key}, "--machine is required"},
		{[]string{"unbond", "--key", key, "--machine", "12"}, "--machine:"},
		{[]string{"withdraw-bond", "--key", key, "--machine", "zz"}, "--machine:"},
		{[]string{"rebond", "--key", key, "--amount", "5"}, "--machine is required"},
		{[]string{"rebond", "--key", key, "--machine", strings.Repeat("ab", 32)}, "--amount is required"},
	}
	for _, c := range cases {
		args := append([]string{"tx"}, c.args...)
		if !containsFlag(c.args, "--api") {
			args = append(args, "--api", api)
		}
		out, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tx %s: error %v, want one containing %q\n%s", strings.Join(c.args, " "), err, c.want, out)
		}
	}
}

func containsFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}
