package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestTxStream runs a stream escrow with the CLI on a real chain: open
// prints the ID the chain stored, tenzro_getAccount lists the open
// stream, the payee's operator claims what accrued, nobody else can claim,
// the payee cannot stop it, the payer's stop pays the rest of what accrued
// and refunds the remainder to the escrow, and a second stop is refused.
func TestTxStream(t *testing.T) {
	n := startTxNet(t)
	ctx := context.Background()
	opKey, op := newAccount(t)
	mustTx(t, "transfer", "--api", n.api, "--key", n.buyerKey, "--to", op.String(), "--amount", "1_500_000_000")
	home := filepath.Join(t.TempDir(), "provider")
	if out, err := runCLI(t, "init", "--home", home, "--role", "provider", "--key-backend", "software"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	out := mustTx(t, "register", "--api", n.api, "--home", home, "--key", opKey, "--bond", "1000000000", "--unbonding", "0s")
	machine, err := identity.ParseMachineID(printedField(t, out, "machine"))
	if err != nil {
		t.Fatal(err)
	}
	mustTx(t, "escrow", "fund", "--api", n.api, "--key", n.buyerKey, "--amount", "300_000_000")

	// 1,000,000 an hour-second: a million micro-units accrue every second.
	out = mustTx(t, "stream", "open", "--api", n.api, "--key", n.buyerKey, "--payee", machine.String(),
		"--rate", "3_600_000_000", "--deposit", "200_000_000")
	id, err := terms.ParseHash(printedField(t, out, "stream"))
	if err != nil {
		t.Fatal(err)
	}
	s, ok, err := n.node.Chain().Stream(ctx, id)
	if err != nil || !ok || s.Payer != n.buyer || s.Operator != op || s.Payee != machine || s.Deposit != 200_000_000 || s.Closed {
		t.Fatalf("stream %s on chain: %+v %v %v", id, s, ok, err)
	}
	if e := n.escrow(t, n.buyer); e.Balance != 100_000_000 {
		t.Fatalf("escrow %+v after the open, want 100000000 left", e)
	}
	var v chainapi.AccountView
	if err := rpcCall(n.api, "tenzro_getAccount", chainapi.AccountParams{Account: n.buyer.String()}, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Streams) != 1 || v.Streams[0].ID != id {
		t.Fatalf("tenzro_getAccount streams %+v, want %s", v.Streams, id)
	}

	// Claim once at least a second of block time has passed.
	nodetest.Eventually(t, 10*time.Second, "a second of block time", func() bool {
		m, err := n.node.Chain().Meta(ctx)
		return err == nil && m.Time >= s.OpenTime+2
	})
	op0 := n.balance(t, op)
	mustTx(t, "stream", "claim", "--api", n.api, "--key", opKey, "--id", id.String())
	s, _, _ = n.node.Chain().Stream(ctx, id)
	if s.Claimed < 2_000_000 || s.Claimed%1_000_000 != 0 || n.balance(t, op) != op0+s.Claimed {
		t.Fatalf("after the claim: stream %+v, operator balance %d (was %d)", s, n.balance(t, op), op0)
	}
	if out, err := runCLI(t, "tx", "stream", "claim", "--api", n.api, "--key", n.buyerKey, "--id", id.String()); err == nil ||
		!strings.Contains(err.Error(), "code 39 (not the payee)") {
		t.Fatalf("the payer claiming: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "tx", "stream", "stop", "--api", n.api, "--key", opKey, "--id", id.String()); err == nil ||
		!strings.Contains(err.Error(), "code 18 (not authorized)") {
		t.Fatalf("the payee stopping: %v\n%s", err, out)
	}

	out = mustTx(t, "stream", "stop", "--api", n.api, "--key", n.buyerKey, "--id", id.String())
	if !strings.Contains(out, "stopped: paid") {
		t.Errorf("stop prints no payout:\n%s", out)
	}
	s, _, _ = n.node.Chain().Stream(ctx, id)
	if !s.Closed || s.Claimed+s.Refunded != s.Deposit || s.Claimed != s.Accrued(s.CloseTime) {
		t.Fatalf("stopped stream %+v", s)
	}
	if got := n.balance(t, op); got != op0+s.Claimed { // the chain's FeePerTx is 0
		t.Fatalf("operator balance %d after the stop, want %d", got, op0+s.Claimed)
	}
	if e := n.escrow(t, n.buyer); e.Balance != 100_000_000+s.Refunded {
		t.Fatalf("escrow %+v after the stop, want %d", e, 100_000_000+s.Refunded)
	}
	if err := rpcCall(n.api, "tenzro_getAccount", chainapi.AccountParams{Account: n.buyer.String()}, &v); err != nil || len(v.Streams) != 0 {
		t.Fatalf("tenzro_getAccount streams after the stop %+v (%v), want none", v.Streams, err)
	}
	if out, err := runCLI(t, "tx", "stream", "stop", "--api", n.api, "--key", n.buyerKey, "--id", id.String()); err == nil ||
		!strings.Contains(err.Error(), "(stream closed)") {
		t.Fatalf("stopping twice: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"open", "--key", n.buyerKey, "--rate", "1", "--deposit", "1"},
		{"open", "--key", n.buyerKey, "--payee", "zz", "--rate", "1", "--deposit", "1"},
		{"open", "--key", n.buyerKey, "--payee", machine.String(), "--rate", "0", "--deposit", "1"},
		{"claim", "--key", n.buyerKey},
		{"stop", "--key", n.buyerKey, "--id", "12"},
	} {
		if out, err := runCLI(t, append([]string{"tx", "stream", args[0], "--api", n.api}, args[1:]...)...); err == nil {
			t.Errorf("tx stream %v: accepted\n%s", args, out)
		}
	}
}
