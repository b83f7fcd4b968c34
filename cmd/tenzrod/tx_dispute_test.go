package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestTxModelDeclare: a validator declares and drops a model's weights
// with the CLI; an account that is no validator is refused by the chain.
func TestTxModelDeclare(t *testing.T) {
	n := startTxNet(t)
	valKey := filepath.Join(filepath.Dir(filepath.Dir(n.genesis)), "validator", "account.key")
	model := terms.Hash32{0xab, 0xcd}
	mustTx(t, "model", "declare", "--api", n.api, "--key", valKey, "--model", model.String())
	h, err := n.node.Chain().ModelHolders(context.Background(), model)
	if err != nil || len(h.Validators) != 1 {
		t.Fatalf("holders after the declaration: %+v %v", h, err)
	}
	if out, err := runCLI(t, "tx", "model", "declare", "--api", n.api, "--key", n.buyerKey, "--model", model.String()); err == nil ||
		!strings.Contains(err.Error(), "code 9 (not a validator)") {
		t.Fatalf("a buyer declaring weights: %v\n%s", err, out)
	}
	mustTx(t, "model", "declare", "--api", n.api, "--key", valKey, "--model", model.String(), "--drop")
	if h, err := n.node.Chain().ModelHolders(context.Background(), model); err != nil || len(h.Validators) != 0 {
		t.Fatalf("holders after the drop: %+v %v", h, err)
	}
}

// TestTxDisputeFlags: bad dispute flags are refused naming the flag,
// before anything is signed.
func TestTxDisputeFlags(t *testing.T) {
	acct, id := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	ev := filepath.Join(t.TempDir(), "ev.json")
	if err := os.WriteFile(ev, []byte(`{"receipt":"AAE=","bogus":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"open", "--request", id, "--bond", "1", "--evidence", ev}, "--payer"},
		{[]string{"open", "--payer", acct, "--request", "12", "--bond", "1", "--evidence", ev}, "--request"},
		{[]string{"open", "--payer", acct, "--request", id, "--evidence", ev}, "--bond"},
		{[]string{"open", "--payer", acct, "--request", id, "--bond", "1"}, "--evidence"},
		{[]string{"open", "--payer", acct, "--request", id, "--bond", "1", "--evidence", ev}, "bogus"},
		{[]string{"vote", "--id", id, "--verdict", "maybe", "--salt", id, "--commit"}, "--verdict"},
		{[]string{"vote", "--id", id, "--verdict", "guilty", "--salt", "zz", "--commit"}, "--salt"},
		{[]string{"vote", "--id", id, "--verdict", "guilty", "--salt", id}, "--commit and --reveal"},
		{[]string{"vote", "--id", id, "--verdict", "guilty", "--salt", id, "--reveal", "--round", "3"}, "--round"},
	} {
		out, err := runCLI(t, append([]string{"tx", "dispute"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("tx dispute %v: %v, want an error naming %s\n%s", tc.args, err, tc.want, out)
		}
	}
}
