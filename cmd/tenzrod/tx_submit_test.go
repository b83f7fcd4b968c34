package main

import (
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
)

// TestPrintCommitted: a transaction that fails in its block is an error
// naming the height, the code and its name, and the reason.
func TestPrintCommitted(t *testing.T) {
	var out strings.Builder
	err := printCommitted(&out, "unbond machine m", node.TxView{Height: 42, Code: uint32(consensus.CodeUnbonding),
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
	if err := printCommitted(&out, "x", node.TxView{Height: 3}); err != nil || !strings.Contains(out.String(), "code       0 (ok)") {
		t.Fatalf("a committed transaction: %v\n%s", err, out.String())
	}
}
