package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// money is everything the test's accounts, escrow, bond and open disputes
// hold, plus what was burned: a dispute only moves money between them.
func (n *disputeNet) money(open ...terms.Hash32) uint64 {
	c := n.c
	var sum uint64
	for _, a := range []terms.AccountID{n.buyer.Account(), n.disputer.Account(), n.operator.Account(), ledger.FeePoolAccount} {
		sum += c.account(a).Balance
	}
	for _, v := range c.Vals {
		if v != n.operator {
			sum += c.account(v.Account()).Balance
		}
	}
	sum += c.escrow(n.buyer.Account(), n.buyer.Account()).Balance
	var p ledger.Provider
	c.get(ledger.KeyProvider(n.m.machineID()), &p)
	sum += p.Bond
	for _, id := range open {
		if d := n.dispute(id); !d.Status.Resolved() {
			sum += d.Bond
		}
	}
	var s ledger.Supply
	c.get(ledger.KeySupply(), &s)
	return sum + s.Burned
}

func (n *disputeNet) provider() ledger.Provider {
	var p ledger.Provider
	if !n.c.get(ledger.KeyProvider(n.m.machineID()), &p) {
		n.c.T.Fatal("provider gone")
	}
	return p
}

// TestDisputeGuilty: a committee convicting within its verdict limit
// slashes the governed share of the bond (a share to the disputer, the
// rest burned and accounted), returns the disputer's bond, reverses the
// record's payment to the buyer's escrow, zeroes standing for the
// governed hours and records the vote against the verdict; money is
// conserved but for the burned amount.
func TestDisputeGuilty(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10, 10}, false)
	c := n.c
	ev, digest := n.paidAnswer(t, 10_000)
	before := n.money()
	op0, dis0 := c.account(n.operator.Account()).Balance, c.account(n.disputer.Account()).Balance
	esc0 := c.escrow(n.buyer.Account(), n.buyer.Account()).Balance
	id, tx := n.open(digest, ev)
	res := n.block(tx)
	if string(res.Txs[0].Data) != string(id[:]) {
		t.Fatalf("open's data %x, want dispute ID %s", res.Txs[0].Data, id)
	}
	if d := n.dispute(id); d.Status != ledger.DisputeDrawing || d.Model != n.model || d.Operator != n.operator.Account() {
		t.Fatalf("dispute after the open: %+v", d)
	}
	var evStored ledger.DisputeEvidence
	if !c.get(ledger.KeyDisputeEvidence(id), &evStored) || string(evStored.Receipt) != string(ev.Receipt) {
		t.Fatal("evidence not stored for the committee")
	}
	if got := n.money(id); got != before {
		t.Fatalf("money %d after the open, before %d", got, before)
	}
	n.block() // draws, seeded by this block's hash
	d := n.dispute(id)
	cur := d.Current()
	if d.Status != ledger.DisputeVoting || len(cur.Members) != 2 || cur.Seed != n.hash(d.OpenHeight+1) || cur.DrawHeight != d.OpenHeight+1 {
		t.Fatalf("after the draw: %+v round %+v", d, cur)
	}
	votes := everyone(d, ledger.VerdictGuilty)
	n.vote(id, votes)
	d = n.dispute(id)
	if d.Status != ledger.DisputeGuilty || d.ResolveHeight > cur.RevealEnd {
		t.Fatalf("after unanimous guilty reveals: %+v", d)
	}
	p := n.provider()
	slash := uint64(10_000_000 / 10)
	reward := slash * 4 / 10
	if d.Slashed != slash || d.Reward != reward || d.Burned != slash-reward || p.Bond != 10_000_000-slash || p.Slashed != slash {
		t.Fatalf("slashing: dispute %+v, provider bond %d", d, p.Bond)
	}
	if got := c.account(n.disputer.Account()).Balance; got != dis0+reward {
		t.Fatalf("disputer has %d, want %d (bond back and the reward)", got, dis0+reward)
	}
	if d.Reversed != 10_000 || c.account(n.operator.Account()).Balance != op0-10_000 ||
		c.escrow(n.buyer.Account(), n.buyer.Account()).Balance != esc0+10_000 {
		t.Fatalf("payment not reversed: dispute %+v", d)
	}
	var sup ledger.Supply
	c.get(ledger.KeySupply(), &sup)
	if sup.Burned != slash-reward {
		t.Fatalf("supply burned %d, want %d", sup.Burned, slash-reward)
	}
	if got := n.money(id); got != before {
		t.Fatalf("money %d (burned included) after the verdict, before %d", got, before)
	}
	st := c.standing(n.m)
	if st.StandingBP != 0 || st.SlashedUntil == 0 {
		t.Fatalf("standing after conviction %+v", st)
	}
	if c.raw(ledger.KeyActiveDisputes()) != nil {
		t.Fatal("a resolved dispute is still active")
	}
	if p.OpenDisputes != 0 {
		t.Fatalf("provider still counts %d open disputes", p.OpenDisputes)
	}
	// The subject cannot be disputed twice.
	_, again := n.open(digest, ev)
	if code := n.try(again); code != ledger.CodeDuplicate {
		t.Fatalf("second dispute of one record: %v", code)
	}
}

// TestDisputeInnocentAndDissent: an innocent verdict (2 of 3 equal
// members: exactly 2/3) pays the disputer's bond to the provider's
// operator, leaves the bond and standing whole, and marks the member that
// voted guilty as against the verdict.
func TestDisputeInnocentAndDissent(t *testing.T) {
	p := disputeParams()
	p.DisputeCommittee = 3
	n := newDisputeNetWith(t, p, []int64{10, 10, 10, 10, 10}, false)
	c := n.c
	ev, digest := n.paidAnswer(t, 10_000)
	op0 := c.account(n.operator.Account()).Balance
	id, d := n.openAndDraw(digest, ev)
	votes := everyone(d, ledger.VerdictInnocent)
	dissenter := d.Current().Members[1].Validator
	votes[dissenter] = ledger.VerdictGuilty
	n.vote(id, votes)
	d = n.dispute(id)
	if d.Status != ledger.DisputeInnocent {
		t.Fatalf("after 2 innocent and 1 guilty reveals: %+v", d)
	}
	if got := c.account(n.operator.Account()).Balance; got != op0+disputeBond {
		t.Fatalf("operator has %d, want %d (the forfeited bond)", got, op0+disputeBond)
	}
	if n.provider().Bond != 10_000_000 || c.standing(n.m).SlashedUntil != 0 {
		t.Fatal("an innocent provider lost bond or standing")
	}
	for _, m := range d.Current().Members {
		if m.Against != (m.Validator == dissenter) || m.Vote != votes[m.Validator] {
			t.Fatalf("member %+v (dissenter %s)", m, dissenter)
		}
	}
}

// TestDisputeRedrawThenLapse: a round without a verdict (one guilty, one
// abstaining: neither holds 2/3) is redrawn once with up to 2k+1 members;
// a second round without one lapses and the bond goes back.
func TestDisputeRedrawThenLapse(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10, 10, 10, 10}, false)
	c := n.c
	ev, digest := n.paidAnswer(t, 10_000)
	dis0 := c.account(n.disputer.Account()).Balance
	id, d := n.openAndDraw(digest, ev)
	votes := map[terms.AccountID]ledger.Verdict{}
	for i, m := range d.Current().Members {
		votes[m.Validator] = []ledger.Verdict{ledger.VerdictGuilty, ledger.VerdictAbstain}[i%2]
	}
	n.vote(id, votes)
	for n.c.l.Height() <= d.Current().RevealEnd {
		n.block()
	}
	d = n.dispute(id)
	if d.Status != ledger.DisputeVoting || len(d.Rounds) != 2 || len(d.Current().Members) != 5 || d.Current().Round != 2 {
		t.Fatalf("after round 1 without a verdict: %+v", d)
	}
	if r1 := d.Rounds[0]; r1.Members[0].Vote == ledger.VerdictNone || r1.Members[1].Vote != ledger.VerdictAbstain {
		t.Fatalf("round 1's votes not kept: %+v", r1.Members)
	}
	for n.c.l.Height() <= d.Current().RevealEnd {
		n.block()
	}
	d = n.dispute(id)
	if d.Status != ledger.DisputeLapsed {
		t.Fatalf("after two rounds without a verdict: %+v", d)
	}
	if got := c.account(n.disputer.Account()).Balance; got != dis0 {
		t.Fatalf("disputer has %d after the lapse, want %d", got, dis0)
	}
	if n.provider().OpenDisputes != 0 {
		t.Fatal("a lapsed dispute still counts against the provider")
	}
}

// TestDisputeRefusals: each way to open or vote wrongly is refused with
// its own code and changes nothing.
func TestDisputeRefusals(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	c := n.c
	evs := []ledger.DisputeEvidence{n.answer(t, 0), n.answer(t, 1)}
	digests := n.settle(t, 100, evs...)
	// Nobody declared the model yet.
	_, tx := n.open(digests[0], evs[0])
	if code := n.try(tx); code != ledger.CodeNoCommittee {
		t.Fatalf("no holders: %v", code)
	}
	n.declareAll()
	subj := ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: n.buyer.Account(), RequestDigest: digests[0]}
	wrongProofs := evs[0]
	wrongProofs.Proofs = []byte{0, 0, 0, 1}
	for name, tc := range map[string]struct {
		p    ledger.DisputeOpen
		want ledger.Code
	}{
		"low bond":      {ledger.DisputeOpen{Subject: subj, Evidence: evs[0], Bond: 499}, ledger.CodeBondTooLow},
		"other receipt": {ledger.DisputeOpen{Subject: subj, Evidence: evs[1], Bond: disputeBond}, ledger.CodeBadEvidence},
		"wrong proofs":  {ledger.DisputeOpen{Subject: subj, Evidence: wrongProofs, Bond: disputeBond}, ledger.CodeBadEvidence},
		"no record": {ledger.DisputeOpen{Subject: ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: n.buyer.Account(),
			RequestDigest: terms.Hash32{1}}, Evidence: evs[0], Bond: disputeBond}, ledger.CodeBadEvidence},
		"expert batch without its record": {ledger.DisputeOpen{Subject: ledger.DisputeSubject{Kind: ledger.SubjectExpertBatch,
			Batch: &ledger.ExpertBatchRef{Layer: 1}}, Bond: disputeBond}, ledger.CodeMalformed},
	} {
		if code := n.try(c.sign(n.disputer, &tc.p)); code != tc.want {
			t.Errorf("%s: %v, want %v", name, code, tc.want)
		}
	}
	if code := n.try(c.sign(n.operator, &ledger.ModelDeclare{ModelID: n.model, Holds: true})); code != ledger.CodeNotValidator {
		t.Errorf("a non-validator declaring weights: %v", code)
	}
	id, tx := n.open(digests[0], evs[0])
	n.block(tx)
	// The mempool sees the dispute before the block that draws it.
	if code := ledger.CodeOf(c.l.Check(c.sign(c.Vals[0], &ledger.DisputeVote{ID: id, Round: 1, Commitment: terms.Hash32{1}}))); code != ledger.CodeWrongPhase {
		t.Errorf("commit before the draw: %v", code)
	}
	n.block()
	d := n.dispute(id)
	cur := d.Current()
	member := n.signerOf(cur.Members[0].Validator)
	var outsider *ledger.Signer
	for _, v := range c.Vals {
		if v.Account() != cur.Members[0].Validator && v.Account() != cur.Members[1].Validator {
			outsider = v
		}
	}
	mine := ledger.VoteCommitment(id, 1, member.Account(), ledger.VerdictGuilty, salt(member.Account()))
	reveal := &ledger.VoteReveal{Verdict: ledger.VerdictGuilty, Salt: salt(member.Account())}
	for name, tc := range map[string]struct {
		s    *ledger.Signer
		v    ledger.DisputeVote
		want ledger.Code
	}{
		"outsider":     {outsider, ledger.DisputeVote{ID: id, Round: 1, Commitment: terms.Hash32{2}}, ledger.CodeNotMember},
		"wrong round":  {member, ledger.DisputeVote{ID: id, Round: 2, Commitment: mine}, ledger.CodeWrongPhase},
		"early reveal": {member, ledger.DisputeVote{ID: id, Round: 1, Reveal: reveal}, ledger.CodeWrongPhase},
		"unknown":      {member, ledger.DisputeVote{ID: terms.Hash32{3}, Round: 1, Commitment: mine}, ledger.CodeUnknownDispute},
	} {
		if code := n.try(c.sign(tc.s, &tc.v)); code != tc.want {
			t.Errorf("%s: %v, want %v", name, code, tc.want)
		}
	}
	first := c.sign(member, &ledger.DisputeVote{ID: id, Round: 1, Commitment: mine})
	second := c.SignAt(member, c.account(member.Account()).Nonce+1, &ledger.DisputeVote{ID: id, Round: 1, Commitment: mine})
	if res := n.blockCodes(first, second); res.Txs[0].Code != ledger.CodeOK || res.Txs[1].Code != ledger.CodeAlreadyVoted {
		t.Errorf("commit then a second commit: %v, %v (%s)", res.Txs[0].Code, res.Txs[1].Code, res.Txs[1].Log)
	}
	for n.c.l.Height() < cur.CommitEnd {
		n.block()
	}
	if code := n.try(c.sign(member, &ledger.DisputeVote{ID: id, Round: 1, Commitment: mine})); code != ledger.CodeWrongPhase {
		t.Errorf("commit after the commit phase: %v", code)
	}
	other := n.signerOf(cur.Members[1].Validator)
	if code := n.try(c.sign(other, &ledger.DisputeVote{ID: id, Round: 1, Reveal: reveal})); code != ledger.CodeBadReveal {
		t.Errorf("reveal without a commitment: %v", code)
	}
	if code := n.try(c.sign(member, &ledger.DisputeVote{ID: id, Round: 1,
		Reveal: &ledger.VoteReveal{Verdict: ledger.VerdictInnocent, Salt: salt(member.Account())}})); code != ledger.CodeBadReveal {
		t.Errorf("reveal of another verdict: %v", code)
	}
	n.block(c.sign(member, &ledger.DisputeVote{ID: id, Round: 1, Reveal: reveal}))
	if d := n.dispute(id); d.Current().Members[0].Vote != ledger.VerdictGuilty || d.Status != ledger.DisputeVoting {
		t.Fatalf("one guilty reveal of two equal members: %+v", d)
	}
	// Past the window, a record cannot be disputed.
	for n.c.l.Height() <= int64(disputeParams().DisputeWindowBlocks)+5 {
		n.block()
	}
	if _, tx := n.open(digests[1], evs[1]); n.try(tx) != ledger.CodeDisputeWindow {
		t.Errorf("dispute after the window: %v", n.try(tx))
	}
}

// TestDisputeBondLocks: a provider with records inside the dispute window
// cannot withdraw its bond, an unbonding bond is still slashed, and the
// bond frees once the window and two verdict limits have passed.
func TestDisputeBondLocks(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	c := n.c
	ev, digest := n.paidAnswer(t, 10_000)
	n.block(c.sign(n.operator, &ledger.ProviderUnbond{MachineID: n.m.machineID()}))
	withdraw := func() ledger.Code {
		return n.try(c.sign(n.operator, &ledger.ProviderWithdraw{MachineID: n.m.machineID()}))
	}
	if code := withdraw(); code != ledger.CodeUnbonding {
		t.Fatalf("withdraw inside the dispute window: %v", code)
	}
	id, drawn := n.openAndDraw(digest, ev)
	n.vote(id, everyone(drawn, ledger.VerdictGuilty))
	if d := n.dispute(id); d.Status != ledger.DisputeGuilty || n.provider().Bond != 9_000_000 {
		t.Fatalf("unbonding provider not slashed: %+v bond %d", d, n.provider().Bond)
	}
	free := ledger.DisputeFreeHeight(n.provider(), disputeParams())
	for n.c.l.Height()+1 < free {
		n.block()
	}
	if code := withdraw(); code != ledger.CodeOK {
		t.Fatalf("withdraw at height %d (free at %d): %v", n.c.l.Height()+1, free, code)
	}
}
