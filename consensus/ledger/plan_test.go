package ledger_test

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

func (c *chain) plan(id terms.Hash32) (ledger.Plan, bool) {
	c.T.Helper()
	var p ledger.Plan
	ok := c.get(ledger.KeyPlan(id), &p)
	return p, ok
}

// planNet is a chain with a buyer holding an escrow with itself and three
// payees.
type planNet struct {
	c      *chain
	buyer  *ledger.Signer
	payees []*ledger.Signer
}

func newPlanNet(t *testing.T) *planNet {
	buyer, gb := ledgertest.Signer(testChain, "plan-buyer", 1<<40)
	n := &planNet{buyer: buyer}
	accts := []ledger.GenesisAccount{gb}
	for _, name := range []string{"payee-a", "payee-b", "payee-c"} {
		s, g := ledgertest.Signer(testChain, name, 0)
		n.payees, accts = append(n.payees, s), append(accts, g)
	}
	n.c = newChain(t, "", genesisTime, ledgertest.Params(), 1, accts...)
	n.c.mustApply(n.c.sign(buyer, &ledger.EscrowFund{Amount: 1_000_000}))
	return n
}

func (n *planNet) legs(chain string, bps ...uint64) []ledger.PlanLeg {
	out := make([]ledger.PlanLeg, len(bps))
	for i, b := range bps {
		out[i] = ledger.PlanLeg{Payee: n.payees[i].Account(), BPS: b}
	}
	out[len(out)-1].Chain = chain
	return out
}

func (n *planNet) balances() []uint64 {
	out := make([]uint64, len(n.payees))
	for i, p := range n.payees {
		out[i] = n.c.account(p.Account()).Balance
	}
	return out
}

// TestPlanLocalCommitsAtOpen: a plan whose legs are all on this chain pays
// every leg in the transaction that opens it, the remainder of the floor
// division to the first leg, and cannot be decided again.
func TestPlanLocalCommitsAtOpen(t *testing.T) {
	n := newPlanNet(t)
	c := n.c
	id := ledger.PlanID(n.buyer.Account(), c.account(n.buyer.Account()).Nonce)
	res := c.mustApply(c.sign(n.buyer, &ledger.PlanOpen{Legs: n.legs(testChain, 3333, 3333, 3334), Total: 1001}))
	if string(res.Txs[0].Data) != string(id[:]) {
		t.Fatalf("open's data %x, want the plan ID %s", res.Txs[0].Data, id)
	}
	// ⌊1001 × 3333 / 10000⌋ = 333 twice, ⌊1001 × 3334 / 10000⌋ = 333; 2 left for the first leg.
	if got := n.balances(); got[0] != 335 || got[1] != 333 || got[2] != 333 {
		t.Fatalf("payee balances %v, want [335 333 333]", got)
	}
	if e := c.escrow(n.buyer.Account(), n.buyer.Account()); e.Balance != 1_000_000-1001 {
		t.Fatalf("escrow %+v after the plan", e)
	}
	p, ok := c.plan(id)
	if !ok || p.Status != ledger.PlanCommitted || p.DecideHeight != p.OpenHeight || p.SplitRule != ledger.SplitRuleHash(p.Legs) {
		t.Fatalf("plan %+v (%v)", p, ok)
	}
	if c.raw(ledger.KeyPlanIndex(n.buyer.Account(), id)) != nil {
		t.Fatal("a decided plan is still in its payer's open-plan index")
	}
	wantCodes(t, c, [][]byte{c.sign(n.buyer, &ledger.PlanDecide{ID: id, Commit: false})}, ledger.CodePlanDecided)
	if got := n.balances(); got[0] != 335 {
		t.Fatalf("a refused second decision moved money: %v", got)
	}
}

// TestPlanForeignLegWaits: a plan with a leg on another chain holds its
// total until the settler decides; commit pays every leg at once, abort
// makes the escrow whole; one decision only; only the settler decides,
// and the payer may abort only after the timeout.
func TestPlanForeignLegWaits(t *testing.T) {
	n := newPlanNet(t)
	c := n.c
	buyer := n.buyer.Account()
	open := func(timeout uint64) terms.Hash32 {
		id := ledger.PlanID(buyer, c.account(buyer).Nonce)
		c.mustApply(c.sign(n.buyer, &ledger.PlanOpen{Legs: n.legs("other-chain", 7000, 3000), Total: 10_000, TimeoutBlocks: timeout}))
		return id
	}
	commitID := open(5)
	if got := n.balances(); got[0] != 0 || got[1] != 0 {
		t.Fatalf("an undecided plan paid: %v", got)
	}
	if e := c.escrow(buyer, buyer); e.Balance != 990_000 {
		t.Fatalf("escrow %+v: the total should be held by the plan", e)
	}
	if c.raw(ledger.KeyPlanIndex(buyer, commitID)) == nil {
		t.Fatal("open plan missing from its payer's index")
	}
	stranger := n.payees[0]
	wantCodes(t, c, [][]byte{c.sign(stranger, &ledger.PlanDecide{ID: commitID, Commit: true})}, ledger.CodeNotAuthorized)
	c.mustApply(c.sign(n.buyer, &ledger.PlanDecide{ID: commitID, Commit: true}))
	if got := n.balances(); got[0] != 7000 || got[1] != 3000 {
		t.Fatalf("commit paid %v, want [7000 3000]", got)
	}
	wantCodes(t, c, [][]byte{c.sign(n.buyer, &ledger.PlanDecide{ID: commitID, Commit: false})}, ledger.CodePlanDecided)

	abortID := open(5)
	c.mustApply(c.sign(n.buyer, &ledger.PlanDecide{ID: abortID}))
	if e := c.escrow(buyer, buyer); e.Balance != 990_000 {
		t.Fatalf("escrow %+v after the abort, want 990000 (whole again)", e)
	}
	if p, _ := c.plan(abortID); p.Status != ledger.PlanAborted {
		t.Fatalf("plan %+v after the abort", p)
	}
	wantCodes(t, c, [][]byte{c.sign(n.buyer, &ledger.PlanDecide{ID: terms.Hash32{9}, Commit: true})}, ledger.CodeUnknownPlan)
}

// TestPlanPayerAbortsAfterTimeout: a gateway-settled plan is decided by
// the gateway; its payer cannot decide before the timeout, and may only
// abort after it.
func TestPlanPayerAbortsAfterTimeout(t *testing.T) {
	buyer, gb := ledgertest.Signer(testChain, "plan-buyer", 1<<40)
	gw, gg := ledgertest.Signer(testChain, "plan-gateway", 1<<20)
	payee, gp := ledgertest.Signer(testChain, "payee-a", 0)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gb, gg, gp)
	c.mustApply(c.sign(buyer, &ledger.EscrowFund{Amount: 50_000, Settler: gw.Account()}))
	legs := []ledger.PlanLeg{{Payee: payee.Account(), BPS: 10_000, Chain: "elsewhere"}}
	wantCodes(t, c, [][]byte{c.sign(buyer, &ledger.PlanOpen{Legs: legs, Total: 100, Settler: gw.Account()})}, ledger.CodeNotAuthorized)
	id := ledger.PlanID(gw.Account(), c.account(gw.Account()).Nonce)
	c.mustApply(c.sign(gw, &ledger.PlanOpen{Legs: legs, Total: 100, Payer: buyer.Account(), TimeoutBlocks: 2}))
	wantCodes(t, c, [][]byte{c.sign(buyer, &ledger.PlanDecide{ID: id})}, ledger.CodeNotAuthorized)
	c.block()
	c.block()
	wantCodes(t, c, [][]byte{c.sign(buyer, &ledger.PlanDecide{ID: id, Commit: true})}, ledger.CodeNotAuthorized)
	c.mustApply(c.sign(buyer, &ledger.PlanDecide{ID: id}))
	if e := c.escrow(buyer.Account(), gw.Account()); e.Balance != 50_000 {
		t.Fatalf("escrow %+v after the payer's abort", e)
	}
}

// TestPlanRefusals: over the escrow, no escrow, bad legs (stateless).
func TestPlanRefusals(t *testing.T) {
	n := newPlanNet(t)
	c := n.c
	nobody, _ := ledgertest.Signer(testChain, "no-escrow", 0)
	c.mustApply(c.sign(n.buyer, &ledger.Transfer{To: nobody.Account(), Amount: 10}))
	wantCodes(t, c, [][]byte{
		c.sign(n.buyer, &ledger.PlanOpen{Legs: n.legs("", 10_000), Total: 1_000_001}),
		c.sign(nobody, &ledger.PlanOpen{Legs: n.legs("", 10_000), Total: 1}),
	}, ledger.CodeOverdraft, ledger.CodeUnknownEscrow)
	for name, legs := range map[string][]ledger.PlanLeg{
		"short":      n.legs("", 5000, 4999),
		"over":       n.legs("", 5000, 5001),
		"zero leg":   n.legs("", 10_000, 0),
		"no legs":    nil,
		"zero payee": {{BPS: 10_000}},
	} {
		raw, err := n.buyer.SignTx(0, &ledger.PlanOpen{Legs: legs, Total: 5})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ledger.DecodeTx(testChain, raw); ledger.CodeOf(err) != ledger.CodeMalformed {
			t.Errorf("%s legs: %v, want malformed", name, err)
		}
	}
}

// TestPlanQuoteSplitRule: a plan citing a quote (a real router quote's
// encoding) must use the split rule the quote names; another rule is
// refused, a quote naming none admits any, and the quote's digest is kept.
func TestPlanQuoteSplitRule(t *testing.T) {
	n := newPlanNet(t)
	c := n.c
	legs := n.legs("", 9000, 1000)
	quote := func(rule terms.Hash32) ([]byte, pricing.Digest) {
		q, err := pricing.NewQuote(peer.ID("provider"), identity.MachineID{1}, [32]byte{2}, terms.RateCard{OutputTokens: 3},
			pricing.Units{OutputTokens: 10}, terms.VerifyReceipt, pricing.Surcharges{}, time.Unix(1_900_000_000, 0), pricing.Digest(rule))
		if err != nil {
			t.Fatal(err)
		}
		b, err := q.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b, q.Digest
	}
	good, digest := quote(ledger.SplitRuleHash(legs))
	other, _ := quote(ledger.SplitRuleHash(n.legs("", 8000, 2000)))
	none, _ := quote(terms.Hash32{})
	wantCodes(t, c, [][]byte{c.sign(n.buyer, &ledger.PlanOpen{Legs: legs, Total: 100, Quote: other})}, ledger.CodeWrongSplitRule)
	wantCodes(t, c, [][]byte{c.sign(n.buyer, &ledger.PlanOpen{Legs: legs, Total: 100, Quote: []byte{0xa0}})}, ledger.CodeMalformed)
	id := ledger.PlanID(n.buyer.Account(), c.account(n.buyer.Account()).Nonce)
	c.mustApply(c.sign(n.buyer, &ledger.PlanOpen{Legs: legs, Total: 100, Quote: good}))
	if p, _ := c.plan(id); p.QuoteDigest != terms.Hash32(digest) || p.Status != ledger.PlanCommitted {
		t.Fatalf("plan %+v: quote digest %s, want %s", p, p.QuoteDigest, digest)
	}
	c.mustApply(c.sign(n.buyer, &ledger.PlanOpen{Legs: n.legs("", 5000, 5000), Total: 100, Quote: none}))
	if got := n.balances(); got[0] != 90+50 || got[1] != 10+50 {
		t.Fatalf("payees %v after two plans", got)
	}
}
