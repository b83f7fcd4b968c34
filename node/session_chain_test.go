package node

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/chainview"
)

// TestStandbyStreamsOnChain: the gateway's stream adapter opens a stream
// from a buyer's escrow it settles, to a registered provider's operator,
// and stops it (accrued to the operator, the rest refunded); the operator
// adapter names the provider's operator only for its registered peer.
func TestStandbyStreamsOnChain(t *testing.T) {
	c := newCreditNet(t, 1, testChainParams(3600), nil)
	prov := c.provs[0]
	settler := newAccountKey(t)
	sa := keyAccount(settler)
	const funds, deposit, rate = 1_000_000, 5_000, 3_600
	c.submit(t, &ledger.Transfer{To: sa, Amount: 100_000}) // the settler pays its transactions' fees
	c.submit(t, &ledger.EscrowFund{Amount: funds, Settler: sa})
	sub, err := consensus.NewSubmitter(c.chain, settler, nil)
	if err != nil {
		t.Fatal(err)
	}
	streams := chainview.Streams{Account: sub}
	m := prov.Identity().MachineID()
	if _, _, err := streams.Open(t.Context(), "alice", m, rate, deposit); err == nil {
		t.Fatal("a stream from a payer that is no account")
	}
	id, height, err := streams.Open(t.Context(), c.payerID().String(), m, rate, deposit)
	if err != nil {
		t.Fatal(err)
	}
	if height <= 0 || height > c.chain.App().Height() {
		t.Fatalf("stream committed at height %d, chain at %d", height, c.chain.App().Height())
	}
	h, err := terms.ParseHash(id)
	if err != nil {
		t.Fatal(err)
	}
	s, ok, err := c.chain.Stream(t.Context(), h)
	op := accountKey(t, prov.Config())
	if err != nil || !ok || s.Payer != c.payerID() || s.Settler != sa || s.Payee != m || s.Operator != op || s.Rate != rate || s.Deposit != deposit || s.Closed {
		t.Fatalf("stream %+v ok %v err %v", s, ok, err)
	}
	if e := c.escrow(t, sa); e.Balance != funds-deposit {
		t.Fatalf("escrow %d after a %d deposit of %d", e.Balance, deposit, funds)
	}
	if err := streams.Stop(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	s, _, _ = c.chain.Stream(t.Context(), h)
	if !s.Closed || s.Claimed+s.Refunded != s.Deposit {
		t.Fatalf("stopped stream %+v", s)
	}
	if e := c.escrow(t, sa); e.Balance != funds-deposit+s.Refunded {
		t.Fatalf("escrow %d after the refund of %d", e.Balance, s.Refunded)
	}
	if err := streams.Stop(t.Context(), id); err == nil {
		t.Fatal("a closed stream stopped twice")
	}

	ops := chainview.Operators{R: c.gw.registry}
	got, ok, err := ops.Operator(t.Context(), prov.host.ID(), m)
	if err != nil || !ok || got != op.String() {
		t.Fatalf("operator %q ok %v err %v, want %s", got, ok, err, op)
	}
	if _, ok, _ := ops.Operator(t.Context(), c.gw.host.ID(), m); ok {
		t.Fatal("another peer announcing the machine got its operator")
	}
	if _, ok, _ := ops.Operator(t.Context(), prov.host.ID(), identity.MachineID{1}); ok {
		t.Fatal("an unregistered machine has an operator")
	}
}
