package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestMemberDuties follows one member through a round on a real ledger:
// nothing before the draw, commit during the commit phase, nothing once
// committed until the reveal phase, reveal then, nothing after; a
// validator off the committee never has a duty.
func TestMemberDuties(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	n.declareAll()
	ev := n.answer(t, 0)
	id, tx := n.open(n.settle(t, 100, ev)[0], ev)
	n.block(tx)
	duties := func(who terms.AccountID) []ledger.Duty {
		return ledger.MemberDuties([]ledger.Dispute{n.dispute(id)}, who, n.c.l.Height()+1)
	}
	if got := duties(n.c.Vals[0].Account()); len(got) != 0 {
		t.Fatalf("duties before the draw: %+v", got)
	}
	n.block()
	d := n.dispute(id)
	cur := d.Current()
	me := n.signerOf(cur.Members[0].Validator)
	for _, v := range n.c.Vals {
		if v.Account() != cur.Members[0].Validator && v.Account() != cur.Members[1].Validator && len(duties(v.Account())) != 0 {
			t.Fatalf("a validator off the committee has duties %+v", duties(v.Account()))
		}
	}
	got := duties(me.Account())
	if len(got) != 1 || got[0].Action != ledger.DutyCommit || got[0].Model != n.model || got[0].Deadline != cur.CommitEnd || got[0].Round != 1 {
		t.Fatalf("duties in the commit phase: %+v", got)
	}
	c := ledger.VoteCommitment(id, 1, me.Account(), ledger.VerdictAbstain, salt(me.Account()))
	n.block(n.c.sign(me, &ledger.DisputeVote{ID: id, Round: 1, Commitment: c}))
	if got := duties(me.Account()); len(got) != 1 || got[0].Action != ledger.DutyReveal || got[0].Deadline != cur.RevealEnd {
		t.Fatalf("duties after committing, at the reveal phase: %+v", got)
	}
	n.block(n.c.sign(me, &ledger.DisputeVote{ID: id, Round: 1, Reveal: &ledger.VoteReveal{Verdict: ledger.VerdictAbstain, Salt: salt(me.Account())}}))
	if got := duties(me.Account()); len(got) != 0 {
		t.Fatalf("duties after revealing: %+v", got)
	}
	if d := n.dispute(id); d.Current().Members[0].Vote != ledger.VerdictAbstain {
		t.Fatalf("abstention not recorded: %+v", d.Current().Members[0])
	}
}

// TestDisputeRevealsOnceAllCommitted: reveals open before the commit
// phase ends as soon as every member has committed (no vote can change
// then), not before; the verdict then comes blocks ahead of the phase.
func TestDisputeRevealsOnceAllCommitted(t *testing.T) {
	p := disputeParams()
	p.DisputeVerdictBlocks = 20
	n := newDisputeNetWith(t, p, []int64{10, 10, 10}, false)
	n.declareAll()
	ev := n.answer(t, 0)
	id, tx := n.open(n.settle(t, 100, ev)[0], ev)
	n.block(tx)
	n.block()
	d := n.dispute(id)
	cur := d.Current()
	a, b := n.signerOf(cur.Members[0].Validator), n.signerOf(cur.Members[1].Validator)
	duties := func(who *ledger.Signer) []ledger.Duty {
		return ledger.MemberDuties([]ledger.Dispute{n.dispute(id)}, who.Account(), n.c.l.Height()+1)
	}
	commit := func(s *ledger.Signer) []byte {
		return n.c.sign(s, &ledger.DisputeVote{ID: id, Round: 1,
			Commitment: ledger.VoteCommitment(id, 1, s.Account(), ledger.VerdictInnocent, salt(s.Account()))})
	}
	reveal := func(s *ledger.Signer) []byte {
		return n.c.sign(s, &ledger.DisputeVote{ID: id, Round: 1, Reveal: &ledger.VoteReveal{Verdict: ledger.VerdictInnocent, Salt: salt(s.Account())}})
	}
	n.block(commit(a))
	if got := duties(a); len(got) != 0 {
		t.Fatalf("one of two committed: duties %+v, want none until the other commits", got)
	}
	if code := n.try(reveal(a)); code != ledger.CodeWrongPhase {
		t.Fatalf("a reveal while a member has not committed: %v", code)
	}
	n.block(commit(b))
	if h := n.c.l.Height(); h >= cur.CommitEnd {
		t.Fatalf("height %d already past the commit phase (ends %d)", h, cur.CommitEnd)
	}
	for _, s := range []*ledger.Signer{a, b} {
		if got := duties(s); len(got) != 1 || got[0].Action != ledger.DutyReveal || got[0].Deadline != cur.RevealEnd {
			t.Fatalf("every member committed: duties %+v, want a reveal by %d", got, cur.RevealEnd)
		}
	}
	n.block(reveal(a), reveal(b))
	if d := n.dispute(id); d.Status != ledger.DisputeInnocent || d.ResolveHeight > cur.CommitEnd {
		t.Fatalf("after both reveals: %s at %d (commit phase to %d)", d.Status, d.ResolveHeight, cur.CommitEnd)
	}
}
