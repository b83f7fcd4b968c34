package ledger_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// streamNet is a chain with a buyer's escrow at a gateway, a registered
// provider machine with a live bond and one that is unbonding.
type streamNet struct {
	c                  *chain
	buyer, gw, op, op2 *ledger.Signer
	m, unbonding       *machine
}

func newStreamNet(t *testing.T) *streamNet {
	t.Helper()
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1_000_000)
	gw, gg := ledgertest.Signer(testChain, "gateway", 1_000)
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	op2, gop2 := ledgertest.Signer(testChain, "operator-2", 10_000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gb, gg, gop, gop2)
	n := &streamNet{c: c, buyer: buyer, gw: gw, op: op, op2: op2, m: newMachine(t), unbonding: newMachine(t)}
	c.mustApply(c.sign(op, n.m.register(t, op, 1000, 60)), c.sign(op2, n.unbonding.register(t, op2, 1000, 60)),
		c.sign(buyer, &ledger.EscrowFund{Amount: 100_000, Settler: gw.Account()}))
	c.mustApply(c.sign(op2, &ledger.ProviderUnbond{MachineID: n.unbonding.machineID()}))
	return n
}

// open opens a stream from the buyer's gateway escrow, signed by the
// gateway, and returns its ID as the result data gives it.
func (n *streamNet) open(t *testing.T, rate, deposit uint64) terms.Hash32 {
	t.Helper()
	c := n.c
	nonce := c.account(n.gw.Account()).Nonce
	res := c.mustApply(c.sign(n.gw, &ledger.StreamOpen{Payer: n.buyer.Account(), Payee: n.m.machineID(), Rate: rate, Deposit: deposit}))
	id := ledger.StreamID(n.gw.Account(), nonce, n.buyer.Account(), n.gw.Account(), n.m.machineID())
	if !bytes.Equal(res.Txs[0].Data, id[:]) {
		t.Fatalf("open's result data %x, want the stream ID %s", res.Txs[0].Data, id)
	}
	return id
}

func (c *chain) stream(id terms.Hash32) (ledger.Stream, bool) {
	c.T.Helper()
	var s ledger.Stream
	ok := c.get(ledger.KeyStream(id), &s)
	return s, ok
}

// TestStreamLifecycle: the deposit leaves the escrow's available balance,
// claims pay exactly ⌊rate × elapsed / 3600⌋ less what was claimed to the
// payee's operator, and a stop pays what accrued and refunds the rest to
// the escrow in the same transaction; the index lists the stream only
// while it is open.
func TestStreamLifecycle(t *testing.T) {
	n := newStreamNet(t)
	c := n.c
	const rate, deposit = 7_200_001, 50_000 // 2000.0003 per second: the fraction must never be paid
	id := n.open(t, rate, deposit)
	s, ok := c.stream(id)
	if !ok || s.Operator != n.op.Account() || s.Payer != n.buyer.Account() || s.Settler != n.gw.Account() || s.Deposit != deposit || s.Balance() != deposit {
		t.Fatalf("stream %+v (%v)", s, ok)
	}
	if e := c.escrow(n.buyer.Account(), n.gw.Account()); e.Balance != 100_000-deposit {
		t.Fatalf("escrow %+v after opening, want %d", e, 100_000-deposit)
	}
	if c.raw(ledger.KeyStreamIndex(n.buyer.Account(), id)) == nil {
		t.Fatal("open stream missing from its payer's index")
	}
	opBal := c.account(n.op.Account()).Balance
	fee := c.params().FeePerTx
	c.Now = c.Now.Add(9 * time.Second) // the claim's block is 10 s after the open
	c.mustApply(c.sign(n.op, &ledger.StreamClaim{ID: id}))
	want := uint64(rate * 10 / 3600) // 20000 (20000.0027… floored)
	if got := c.account(n.op.Account()).Balance; got != opBal-fee+want {
		t.Fatalf("operator balance %d after claim, want %d", got, opBal-fee+want)
	}
	if s, _ = c.stream(id); s.Claimed != want || s.Balance() != deposit-want {
		t.Fatalf("stream after claim %+v", s)
	}
	c.Now = c.Now.Add(4 * time.Second) // stop 15 s after the open
	c.mustApply(c.sign(n.buyer, &ledger.StreamStop{ID: id}))
	accrued := uint64(rate * 15 / 3600)
	s, _ = c.stream(id)
	if !s.Closed || s.Claimed != accrued || s.Refunded != deposit-accrued || s.Balance() != 0 || s.Claimed+s.Refunded != s.Deposit {
		t.Fatalf("stream after stop %+v, want accrued %d", s, accrued)
	}
	if got := c.account(n.op.Account()).Balance; got != opBal-fee+accrued {
		t.Fatalf("operator balance %d after stop, want %d", got, opBal-fee+accrued)
	}
	if e := c.escrow(n.buyer.Account(), n.gw.Account()); e.Balance != 100_000-accrued {
		t.Fatalf("escrow %+v after stop, want %d", e, 100_000-accrued)
	}
	if c.raw(ledger.KeyStreamIndex(n.buyer.Account(), id)) != nil {
		t.Fatal("stopped stream still in its payer's index")
	}
	wantCodes(t, c, [][]byte{
		c.sign(n.op, &ledger.StreamClaim{ID: id}),
		c.sign(n.buyer, &ledger.StreamStop{ID: id}),
		c.sign(n.gw, &ledger.StreamStop{ID: id}),
	}, ledger.CodeStreamClosed, ledger.CodeStreamClosed, ledger.CodeStreamClosed)
}

// TestStreamPaidOutCloses: a claim that takes the whole deposit closes the
// stream; nothing accrues beyond the deposit.
func TestStreamPaidOutCloses(t *testing.T) {
	n := newStreamNet(t)
	c := n.c
	id := n.open(t, 3600, 5) // 1 per second, 5 in all
	c.Now = c.Now.Add(time.Hour)
	before := c.account(n.op.Account()).Balance
	c.mustApply(c.sign(n.op, &ledger.StreamClaim{ID: id}))
	if got := c.account(n.op.Account()).Balance; got != before-c.params().FeePerTx+5 {
		t.Fatalf("operator got %d, want the deposit 5", got+c.params().FeePerTx-before)
	}
	if s, _ := c.stream(id); !s.Closed || s.Claimed != 5 || s.Refunded != 0 {
		t.Fatalf("paid-out stream %+v, want closed", s)
	}
	wantCodes(t, c, [][]byte{c.sign(n.gw, &ledger.StreamStop{ID: id})}, ledger.CodeStreamClosed)
}

// TestStreamOwnEscrow: a payer opens a stream from its escrow with
// itself (Payer and Settler zero) and stops it.
func TestStreamOwnEscrow(t *testing.T) {
	n := newStreamNet(t)
	c := n.c
	b := n.buyer
	c.mustApply(c.sign(b, &ledger.EscrowFund{Amount: 900}))
	nonce := c.account(b.Account()).Nonce
	res := c.mustApply(c.sign(b, &ledger.StreamOpen{Payee: n.m.machineID(), Rate: 1, Deposit: 900}))
	id := ledger.StreamID(b.Account(), nonce, b.Account(), b.Account(), n.m.machineID())
	if !bytes.Equal(res.Txs[0].Data, id[:]) {
		t.Fatalf("result data %x, want %s", res.Txs[0].Data, id)
	}
	if e := c.escrow(b.Account(), b.Account()); e.Balance != 0 {
		t.Fatalf("own escrow %+v after opening with all of it", e)
	}
	c.mustApply(c.sign(b, &ledger.StreamStop{ID: id}))
	if e := c.escrow(b.Account(), b.Account()); e.Balance != 900 { // 1 per hour: nothing accrued in a second
		t.Fatalf("own escrow %+v after stop, want the deposit back", e)
	}
}

// TestStreamRefusals: one refusal per rule, each with its code.
func TestStreamRefusals(t *testing.T) {
	n := newStreamNet(t)
	c := n.c
	b, gw := n.buyer.Account(), n.gw.Account()
	m := n.m.machineID()
	stranger := newMachine(t).machineID()
	c.mustApply(c.sign(n.buyer, &ledger.EscrowWithdraw{Amount: 30_000, Settler: gw})) // available 70000 of 100000
	open := func(p ledger.StreamOpen) *ledger.StreamOpen { return &p }
	wantCodes(t, c, [][]byte{
		c.sign(n.buyer, open(ledger.StreamOpen{Settler: gw, Payee: m, Rate: 1, Deposit: 1})),                 // the payer is not the settler
		c.sign(n.op, open(ledger.StreamOpen{Payer: b, Settler: gw, Payee: m, Rate: 1, Deposit: 1})),          // nor is anyone else
		c.sign(n.gw, open(ledger.StreamOpen{Payer: b, Payee: stranger, Rate: 1, Deposit: 1})),                // unregistered payee
		c.sign(n.gw, open(ledger.StreamOpen{Payer: b, Payee: n.unbonding.machineID(), Rate: 1, Deposit: 1})), // no live bond
		c.sign(n.gw, open(ledger.StreamOpen{Payer: b, Payee: m, Rate: 1, Deposit: 70_001})),                  // over the available balance
		c.sign(n.gw, open(ledger.StreamOpen{Payer: n.op.Account(), Payee: m, Rate: 1, Deposit: 1})),          // no such escrow
		c.sign(n.gw, open(ledger.StreamOpen{Payer: b, Payee: m, Rate: 0, Deposit: 1})),                       // zero rate
		c.sign(n.gw, open(ledger.StreamOpen{Payer: b, Payee: m, Rate: 1, Deposit: 0})),                       // zero deposit
		c.sign(n.gw, &ledger.StreamClaim{}),                                                                  // zero ID
		c.sign(n.op, &ledger.StreamClaim{ID: terms.Hash32{1}}),                                               // unknown stream
	}, ledger.CodeNotAuthorized, ledger.CodeNotAuthorized, ledger.CodeUnknownProvider, ledger.CodeUnbonding,
		ledger.CodeOverdraft, ledger.CodeUnknownEscrow, ledger.CodeMalformed, ledger.CodeMalformed, ledger.CodeMalformed,
		ledger.CodeUnknownStream)

	id := n.open(t, 3600, 60_000)
	wantCodes(t, c, [][]byte{
		c.sign(n.buyer, &ledger.StreamClaim{ID: id}), // claim by the payer
		c.sign(n.op2, &ledger.StreamClaim{ID: id}),   // claim by another operator
		c.sign(n.op, &ledger.StreamStop{ID: id}),     // stop by the payee
	}, ledger.CodeNotPayee, ledger.CodeNotPayee, ledger.CodeNotAuthorized)
	// At 1 per hour nothing has accrued a second after the open.
	slow := n.open(t, 1, 10)
	wantCodes(t, c, [][]byte{c.sign(n.op, &ledger.StreamClaim{ID: slow})}, ledger.CodeOverdraft)
	c.mustApply(c.sign(n.gw, &ledger.StreamStop{ID: id}))
	wantCodes(t, c, [][]byte{
		c.sign(n.gw, &ledger.StreamStop{ID: id}),
		c.sign(n.op, &ledger.StreamClaim{ID: id}),
	}, ledger.CodeStreamClosed, ledger.CodeStreamClosed)
}
