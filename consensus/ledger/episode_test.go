package ledger_test

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// convictBatch opens the dispute of entry j of exchange i of call c and
// has every member vote guilty; it returns the resolved dispute.
func (n *disputeNet) convictBatch(t *testing.T, c *expertCall, i, j int) ledger.Dispute {
	t.Helper()
	open := n.batchOpen(c, i, j)
	id := ledger.DisputeID(open.Subject)
	n.block(n.c.sign(n.disputer, open))
	n.block()
	n.vote(id, everyone(n.dispute(id), ledger.VerdictGuilty))
	d := n.dispute(id)
	if d.Status != ledger.DisputeGuilty {
		t.Fatalf("dispute of call %x exchange %d entry %d: %+v", c.digest[:4], i, j, d)
	}
	return d
}

// TestEpisodeSlashesOnce: a holder paid for two calls while lying is
// convicted over the first: one slash of the governed share, barred.
// A record paying it after that is refused (CodeConvicted) and moves no
// money; the second call's conviction, from the same episode, reverses
// that call's payment but slashes nothing. A re-bond short of the slash
// or by another account is refused; a re-bond of the slash readmits it,
// its next record settles, and a conviction over that record is a new
// episode: slashed again and barred again.
func TestEpisodeSlashesOnce(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	c := n.c
	n.declareAll()
	first, second := n.expertCall(t, "ep-1", 10_000), n.expertCall(t, "ep-2", 20_000)
	bond0 := n.provider().Bond
	slash := bond0 / 10

	d1 := n.convictBatch(t, first, 0, 0)
	p := n.provider()
	if d1.Slashed != slash || d1.Reversed != 10_000 || !p.Barred || p.ConvictedAt != d1.ResolveHeight || p.RebondDue != slash || p.Bond != bond0-slash {
		t.Fatalf("first conviction %+v, provider %+v", d1, p)
	}
	if st := c.standing(n.m); !st.Barred || st.StandingBP != 0 || st.ConvictedAt != d1.ResolveHeight {
		t.Fatalf("standing of a barred machine: %+v", st)
	}

	// Unpaid after the conviction height.
	op0, esc0 := c.account(n.operator.Account()).Balance, c.escrow(n.buyer.Account(), n.buyer.Account()).Balance
	env, _, _ := n.exchange(t, "after", 0)
	h := terms.Hash32(sha256.Sum256(env))
	late := ledgertest.Signed(t, n.buyer, receipt.PaymentRecord{Payer: n.buyer.Account(), Provider: n.m.machineID(), RequestDigest: terms.Hash32{0xaf},
		QuoteDigest: ledger.ReceiptsHash([]terms.Hash32{h}), Price: 5_000, Units: 4, Receipt: env, ReceiptHash: h, ExpiryHeight: c.l.Height() + 50})
	wantSkipped(t, n.block(c.sign(n.operator, &ledger.Settlement{Records: []receipt.PaymentRecord{late}})).Txs[0], 0,
		map[int]ledger.Code{0: ledger.CodeConvicted})
	if got := c.escrow(n.buyer.Account(), n.buyer.Account()).Balance; got != esc0 {
		t.Fatalf("escrow %d after a refused record, want %d", got, esc0)
	}
	if got := c.account(n.operator.Account()).Balance; got > op0 {
		t.Fatalf("barred operator's balance %d, before %d: paid", got, op0)
	}

	// The same episode: judged, reversed per record, not slashed again.
	dis0 := c.account(n.disputer.Account()).Balance
	d2 := n.convictBatch(t, second, 1, 1)
	if d2.Slashed != 0 || d2.Reward != 0 || d2.Reversed != 20_000 {
		t.Fatalf("second conviction of the episode: %+v", d2)
	}
	if got := c.account(n.disputer.Account()).Balance; got != dis0 {
		t.Fatalf("disputer %d after the episode's second verdict, want its bond back (%d)", got, dis0)
	}
	if p := n.provider(); p.Bond != bond0-slash || p.ConvictedAt != d1.ResolveHeight {
		t.Fatalf("provider after the episode's second conviction: %+v", p)
	}

	// Re-bonding.
	for name, tc := range map[string]struct {
		by   *ledger.Signer
		amt  uint64
		want ledger.Code
	}{
		"short of the slash": {n.operator, slash - 1, ledger.CodeBondTooLow},
		"another account":    {n.disputer, slash, ledger.CodeNotAuthorized},
	} {
		if code := n.try(c.sign(tc.by, &ledger.ProviderRebond{MachineID: n.m.machineID(), Amount: tc.amt})); code != tc.want {
			t.Errorf("re-bond %s: %v, want %v", name, code, tc.want)
		}
	}
	if !n.provider().Barred {
		t.Fatal("a refused re-bond lifted the bar")
	}
	n.block(c.sign(n.operator, &ledger.ProviderRebond{MachineID: n.m.machineID(), Amount: slash}))
	if p := n.provider(); p.Barred || p.RebondDue != 0 || p.Bond != bond0 {
		t.Fatalf("after the re-bond: %+v", p)
	}

	// The next episode.
	third := n.expertCall(t, "ep-3", 30_000)
	d3 := n.convictBatch(t, third, 2, 0)
	if want := bond0 / 10; d3.Slashed != want || d3.Reversed != 30_000 {
		t.Fatalf("conviction after the re-bond: %+v, want slashed %d", d3, want)
	}
	if p := n.provider(); !p.Barred || p.ConvictedAt != d3.ResolveHeight || p.Bond != bond0-bond0/10 {
		t.Fatalf("provider after the second episode: %+v", p)
	}
}

// TestNoCommitteeRefusedInBlock: an expert batch dispute over a model no
// validator declared is refused in its block with CodeNoCommittee: no
// dispute is stored, the provider has none open, and the disputer pays
// only the transaction fee, never its bond.
func TestNoCommitteeRefusedInBlock(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	c := n.c
	call := n.expertCall(t, "no-committee", 10_000)
	open := n.batchOpen(call, 0, 1)
	dis0 := c.account(n.disputer.Account()).Balance
	res := n.blockCodes(c.sign(n.disputer, open))
	if code := res.Txs[0].Code; code != ledger.CodeNoCommittee || !strings.Contains(res.Txs[0].Log, "declared model") {
		t.Fatalf("a dispute no validator can judge: %v %q", code, res.Txs[0].Log)
	}
	if got, want := c.account(n.disputer.Account()).Balance, dis0-disputeParams().FeePerTx; got != want {
		t.Fatalf("disputer has %d after the refusal, want %d (the fee only)", got, want)
	}
	var d ledger.Dispute
	if c.get(ledger.KeyDispute(ledger.DisputeID(open.Subject)), &d) || n.provider().OpenDisputes != 0 {
		t.Fatalf("a refused dispute left state: %+v, open disputes %d", d, n.provider().OpenDisputes)
	}
}
