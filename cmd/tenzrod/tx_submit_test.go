package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// TestPrintCommitted: a transaction that fails in its block is an error
// naming the height, the code and its name, and the reason.
func TestPrintCommitted(t *testing.T) {
	var out strings.Builder
	err := printCommitted(&out, "unbond machine m", chainapi.TxView{Height: 42, Code: uint32(ledger.CodeUnbonding),
		Log: "ledger: unbonding: machine m is already unbonding"})
	if err == nil || err.Error() != "tx: unbond machine m failed in block 42: code 19 (unbonding): machine m is already unbonding (its nonce is spent)" {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{"height     42\n", "code       19 (unbonding)\n", "log        ledger: unbonding: machine m"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := printCommitted(&out, "x", chainapi.TxView{Height: 3}); err != nil || !strings.Contains(out.String(), "code       0 (ok)") {
		t.Fatalf("a committed transaction: %v\n%s", err, out.String())
	}
}

// TestTxHelp: every tx command explains itself with an example, and its
// help lists the flags it needs.
func TestTxHelp(t *testing.T) {
	var leaves []string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		path = append(path, c.Name())
		if !c.HasSubCommands() {
			leaves = append(leaves, strings.Join(path, " "))
			if c.Example == "" || c.Short == "" {
				t.Errorf("%s: no example or short help", strings.Join(path, " "))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub, path)
		}
	}
	walk(newTxCmd(), nil)
	if len(leaves) != 17 {
		t.Fatalf("tx commands %v, want 17", leaves)
	}
	for _, leaf := range leaves {
		out, err := runCLI(t, append(strings.Fields(leaf), "--help")...)
		if err != nil || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--api") || !strings.Contains(out, "--key") || !strings.Contains(out, "--wait") {
			t.Errorf("%s --help: %v\n%s", leaf, err, out)
		}
	}
}
