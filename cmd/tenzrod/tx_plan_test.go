package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestTxPlan runs settlement plans with the CLI on a real chain: a plan
// all on this chain pays every leg as it opens (the remainder to the first
// leg); a plan with a leg on another chain is held, listed in
// tenzro_getAccount's plans, paid whole by decide --commit, and a second
// decision exits non-zero naming the code; an abort returns the total.
func TestTxPlan(t *testing.T) {
	n := startTxNet(t)
	ctx := context.Background()
	_, a := newAccount(t)
	_, b := newAccount(t)
	mustTx(t, "escrow", "fund", "--api", n.api, "--key", n.buyerKey, "--amount", "1_000_000")

	out := mustTx(t, "plan", "open", "--api", n.api, "--key", n.buyerKey, "--leg", a.String()+"=6667", "--leg", b.String()+"=3333", "--total", "1_000")
	id, err := terms.ParseHash(printedField(t, out, "plan"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "committed") {
		t.Errorf("a local plan's output does not say it committed:\n%s", out)
	}
	// ⌊1000 × 6667 / 10000⌋ = 666 and ⌊1000 × 3333 / 10000⌋ = 333: 1 left for the first leg.
	if ga, gb := n.balance(t, a), n.balance(t, b); ga != 667 || gb != 333 {
		t.Fatalf("legs paid %d and %d, want 667 and 333", ga, gb)
	}
	if p, ok, err := n.node.Chain().Plan(ctx, id); err != nil || !ok || p.Status != ledger.PlanCommitted {
		t.Fatalf("plan %s on chain: %+v %v %v", id, p, ok, err)
	}

	out = mustTx(t, "plan", "open", "--api", n.api, "--key", n.buyerKey, "--leg", a.String()+"=5000",
		"--leg", b.String()+"=5000@other-chain", "--total", "2_000", "--timeout", "100")
	held, err := terms.ParseHash(printedField(t, out, "plan"))
	if err != nil {
		t.Fatal(err)
	}
	var v chainapi.AccountView
	if err := rpcCall(n.api, "tenzro_getAccount", chainapi.AccountParams{Account: n.buyer.String()}, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Plans) != 1 || v.Plans[0].ID != held || v.Plans[0].Status != ledger.PlanOpenStatus || v.Plans[0].Total != 2_000 {
		t.Fatalf("tenzro_getAccount plans %+v, want the held plan %s", v.Plans, held)
	}
	if e := n.escrow(t, n.buyer); e.Balance != 1_000_000-3_000 {
		t.Fatalf("escrow %+v with a plan held", e)
	}
	mustTx(t, "plan", "decide", "--api", n.api, "--key", n.buyerKey, "--id", held.String(), "--commit")
	if ga, gb := n.balance(t, a), n.balance(t, b); ga != 667+1000 || gb != 333+1000 {
		t.Fatalf("after the commit legs hold %d and %d", ga, gb)
	}
	if out, err := runCLI(t, "tx", "plan", "decide", "--api", n.api, "--key", n.buyerKey, "--id", held.String(), "--abort"); err == nil ||
		!strings.Contains(err.Error(), "code 41 (plan decided)") {
		t.Fatalf("a second decision: %v\n%s", err, out)
	}

	out = mustTx(t, "plan", "open", "--api", n.api, "--key", n.buyerKey, "--leg", a.String()+"=10000@elsewhere", "--total", "5_000")
	aborted, err := terms.ParseHash(printedField(t, out, "plan"))
	if err != nil {
		t.Fatal(err)
	}
	mustTx(t, "plan", "decide", "--api", n.api, "--key", n.buyerKey, "--id", aborted.String(), "--abort")
	if e := n.escrow(t, n.buyer); e.Balance != 1_000_000-3_000 {
		t.Fatalf("escrow %+v after the abort, want it whole again", e)
	}
	for _, args := range [][]string{
		{"open", "--key", n.buyerKey, "--total", "1"},
		{"open", "--key", n.buyerKey, "--leg", a.String() + "=5000", "--total", "1"},
		{"open", "--key", n.buyerKey, "--leg", "zz=10000", "--total", "1"},
		{"open", "--key", n.buyerKey, "--leg", a.String(), "--total", "1"},
		{"open", "--key", n.buyerKey, "--leg", a.String() + "=10000", "--total", "1.5"},
		{"decide", "--key", n.buyerKey, "--id", held.String()},
		{"decide", "--key", n.buyerKey, "--id", held.String(), "--commit", "--abort"},
	} {
		if out, err := runCLI(t, append([]string{"tx", "plan", args[0], "--api", n.api}, args[1:]...)...); err == nil {
			t.Errorf("tx plan %v: accepted\n%s", args, out)
		}
	}
}

func TestParseLeg(t *testing.T) {
	acct := strings.Repeat("ab", 32)
	l, err := parseLeg(acct + "=2500@other")
	if err != nil || l.BPS != 2500 || l.Chain != "other" || l.Payee.String() != acct {
		t.Fatalf("parseLeg: %+v %v", l, err)
	}
	for _, bad := range []string{acct, acct + "=0", acct + "=10001", acct + "=-5", "xx=5", acct + "=5.5"} {
		if _, err := parseLeg(bad); err == nil {
			t.Errorf("parseLeg(%q) accepted", bad)
		}
	}
}
