package ledger_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestDisputeProperty runs 12 disputes over random votes on a chain and
// its mirror node: members follow their duties (MemberDuties) but skip
// some and vote at random, so verdicts, redraws and lapses all happen.
// After every block both nodes hold the same state; the money in
// accounts, the escrow, the provider's bond and the bonds of open
// disputes plus the burned total equals what there was before the first
// dispute; each conviction's slash is its reward plus its burn and the
// burned total is theirs; the bond lost is the sum slashed; the provider
// counts exactly the open disputes; and every dispute ends within two
// rounds.
func TestDisputeProperty(t *testing.T) {
	const records = 12
	p := disputeParams()
	p.DisputeWindowBlocks = 1000
	p.DisputeCommittee = 2
	n := newDisputeNetWith(t, p, []int64{10, 20, 30, 40, 50}, false)
	n.declareAll()
	evs := make([]ledger.DisputeEvidence, records)
	for i := range evs {
		evs[i] = n.answer(t, i)
	}
	digests := n.settle(t, 10_000, evs...)
	before := n.money()
	bond0 := n.provider().Bond
	rng := rand.New(rand.NewPCG(14, 2))
	var ids []terms.Hash32
	next := 0
	statuses := map[ledger.DisputeStatus]int{}
	type voteKey struct {
		id    terms.Hash32
		round uint8
		who   terms.AccountID
	}
	chosen := map[voteKey]ledger.Verdict{} // what each member committed to, to reveal
	verdicts := map[ledger.Verdict]int{}
	for blk := 0; blk < 400; blk++ {
		var txs [][]byte
		var ds []ledger.Dispute
		for _, id := range ids {
			ds = append(ds, n.dispute(id))
		}
		if next < records && rng.IntN(3) == 0 {
			id, tx := n.open(digests[next], evs[next])
			ids, txs = append(ids, id), append(txs, tx)
			next++
		}
		for _, v := range n.c.Vals {
			for _, duty := range ledger.MemberDuties(ds, v.Account(), n.c.l.Height()+1) {
				if rng.IntN(5) == 0 {
					continue // a member that misses this duty
				}
				s := salt(v.Account())
				s[0] = duty.Round
				key := voteKey{duty.Dispute, duty.Round, v.Account()}
				if duty.Action == ledger.DutyCommit {
					chosen[key] = []ledger.Verdict{ledger.VerdictGuilty, ledger.VerdictGuilty, ledger.VerdictInnocent, ledger.VerdictAbstain}[rng.IntN(4)]
					txs = append(txs, n.c.sign(v, &ledger.DisputeVote{ID: duty.Dispute, Round: duty.Round,
						Commitment: ledger.VoteCommitment(duty.Dispute, duty.Round, v.Account(), chosen[key], s)}))
				} else {
					txs = append(txs, n.c.sign(v, &ledger.DisputeVote{ID: duty.Dispute, Round: duty.Round,
						Reveal: &ledger.VoteReveal{Verdict: chosen[key], Salt: s}}))
				}
				break // one transaction per signer per block: nonces come from committed state
			}
		}
		res := n.blockCodes(txs...)
		for i, r := range res.Txs {
			// A reveal may come after another member's reveal decided the
			// dispute in the same block: that one is refused, nothing else.
			if r.Code != ledger.CodeOK && r.Code != ledger.CodeWrongPhase {
				t.Fatalf("block %d tx %d: %v %s", blk, i, r.Code, r.Log)
			}
		}
		var burned, slashed uint64
		open := 0
		for _, id := range ids {
			d := n.dispute(id)
			if !d.Status.Resolved() {
				open++
			}
			if d.Slashed != d.Reward+d.Burned+d.Refunded {
				t.Fatalf("dispute %s: slashed %d ≠ reward %d + burned %d + refunded %d", id, d.Slashed, d.Reward, d.Burned, d.Refunded)
			}
			if len(d.Rounds) > 2 {
				t.Fatalf("dispute %s drew %d rounds", id, len(d.Rounds))
			}
			burned += d.Burned
			slashed += d.Slashed
		}
		var sup ledger.Supply
		n.c.get(ledger.KeySupply(), &sup)
		prov := n.provider()
		switch {
		case n.money(ids...) != before:
			t.Fatalf("block %d: money %d, before the disputes %d", blk, n.money(ids...), before)
		case sup.Burned != burned:
			t.Fatalf("block %d: supply burned %d, disputes burned %d", blk, sup.Burned, burned)
		case prov.Bond != bond0-slashed || prov.Slashed != slashed:
			t.Fatalf("block %d: bond %d (slashed %d), disputes slashed %d of %d", blk, prov.Bond, prov.Slashed, slashed, bond0)
		case prov.OpenDisputes != uint64(open):
			t.Fatalf("block %d: provider counts %d open disputes, %d are", blk, prov.OpenDisputes, open)
		}
		if next == records && open == 0 {
			break
		}
	}
	for _, id := range ids {
		d := n.dispute(id)
		statuses[d.Status]++
		for _, r := range d.Rounds {
			for _, m := range r.Members {
				verdicts[m.Vote]++
			}
		}
	}
	t.Logf("statuses %v, votes %v", statuses, verdicts)
	if len(ids) != records || statuses[ledger.DisputeVoting]+statuses[ledger.DisputeDrawing] != 0 {
		t.Fatalf("disputes %d, statuses %v: some never ended", len(ids), statuses)
	}
	if statuses[ledger.DisputeGuilty] == 0 || statuses[ledger.DisputeInnocent]+statuses[ledger.DisputeLapsed] == 0 {
		t.Fatalf("statuses %v: the sequence missed a case", statuses)
	}
}
