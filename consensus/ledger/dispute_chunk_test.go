package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// TestDisputeChunkRange: a dispute names the chunk its committee judges;
// one past the proofs' last chunk is refused at decode (malformed), the
// disputer's balance untouched, and the last chunk opens the dispute with
// the chunk stored for the committee.
func TestDisputeChunkRange(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	n.declareAll()
	ev := n.answerOf(t, 0, 70, true) // chunks 0, 1 and 2 (6 steps)
	digest := n.settle(t, 10_000, ev)[0]
	dis0 := n.c.account(n.disputer.Account()).Balance
	for _, chunk := range []uint32{3, 4, 1 << 31} {
		ev.Chunk = chunk
		if _, tx := n.open(digest, ev); n.try(tx) != ledger.CodeMalformed {
			t.Fatalf("chunk %d of 3: not refused as malformed", chunk)
		}
	}
	if got := n.c.account(n.disputer.Account()).Balance; got != dis0 {
		t.Fatalf("disputer's balance %d after refused disputes, was %d", got, dis0)
	}
	ev.Chunk = 2
	id, tx := n.open(digest, ev)
	if code := n.block(tx).Txs[0].Code; code != ledger.CodeOK {
		t.Fatalf("last chunk refused: %v", code)
	}
	var stored ledger.DisputeEvidence
	if !n.c.get(ledger.KeyDisputeEvidence(id), &stored) || stored.Chunk != 2 {
		t.Fatalf("stored evidence names chunk %d, want 2", stored.Chunk)
	}
}

// TestDisputeBondScalesWithPrice: the least dispute bond is the governed
// share of the record's price per chunk up to the one named, above the
// flat minimum, and a conviction
// slashes at most DisputeSlashPriceX times what the provider was paid
// (below the bond share, which a tiny job once took whole).
func TestDisputeBondScalesWithPrice(t *testing.T) {
	p := disputeParams()
	p.DisputeBondBP, p.DisputeSlashPriceX = 2500, 20
	n := newDisputeNetWith(t, p, []int64{10, 10, 10, 10}, false)
	c := n.c
	n.declareAll()
	ev := n.answer(t, 0)
	const price = 10_000
	digest := n.settle(t, price, ev)[0]
	if got := ledger.DisputeBond(p, price, 0); got != 2500 {
		t.Fatalf("DisputeBond = %d, want 2500 (25%% of %d)", got, price)
	}
	if got := ledger.DisputeBond(p, price, 2); got != 7500 {
		t.Fatalf("DisputeBond naming chunk 2 = %d, want 7500 (25%% of %d per chunk, 3 chunks)", got, price)
	}
	if got := ledger.DisputeBond(p, 1, 0); got != p.DisputeMinBond {
		t.Fatalf("DisputeBond of a 1 µ job = %d, want the minimum %d", got, p.DisputeMinBond)
	}
	subj := ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: n.buyer.Account(), RequestDigest: digest}
	dis0 := c.account(n.disputer.Account()).Balance
	low := c.sign(n.disputer, &ledger.DisputeOpen{Subject: subj, Evidence: ev, Bond: 2499})
	if code := n.try(low); code != ledger.CodeBondTooLow {
		t.Fatalf("bond below 25%% of the price: %v", code)
	}
	if got := c.account(n.disputer.Account()).Balance; got != dis0 {
		t.Fatalf("refused bond taken: balance %d, was %d", got, dis0)
	}
	id := ledger.DisputeID(subj)
	if code := n.block(c.sign(n.disputer, &ledger.DisputeOpen{Subject: subj, Evidence: ev, Bond: 2500})).Txs[0].Code; code != ledger.CodeOK {
		t.Fatalf("bond of 25%% of the price: %v", code)
	}
	bond := n.provider().Bond
	n.block()
	n.vote(id, everyone(n.dispute(id), ledger.VerdictGuilty))
	d := n.dispute(id)
	// The operator was credited the price less the record fee.
	want := min(bond*p.DisputeSlashBP/ledger.BasisPoints, d.Credited*20)
	if d.Status != ledger.DisputeGuilty || d.Slashed != want || want >= bond*p.DisputeSlashBP/ledger.BasisPoints {
		t.Fatalf("conviction slashed %d of bond %d (credited %d), want %d, below the bond share", d.Slashed, bond, d.Credited, want)
	}
	if got := n.provider().Bond; got != bond-want {
		t.Fatalf("bond after the slash %d, want %d", got, bond-want)
	}
}
