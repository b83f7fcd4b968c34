package validator

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// fakeDutyChain serves fixed duties and evidence.
type fakeDutyChain struct {
	duties   []ledger.Duty
	evidence map[terms.Hash32]ledger.DisputeEvidence
}

func (c *fakeDutyChain) Duties(context.Context, terms.AccountID) ([]ledger.Duty, error) {
	return c.duties, nil
}

func (c *fakeDutyChain) DisputeEvidence(_ context.Context, id terms.Hash32) (ledger.DisputeEvidence, bool, error) {
	e, ok := c.evidence[id]
	return e, ok, nil
}

// recordingSubmitter keeps what it was asked to submit.
type recordingSubmitter struct {
	acct terms.AccountID
	sent []any
}

func (s *recordingSubmitter) Submit(_ context.Context, p any) (consensus.TxResult, error) {
	s.sent = append(s.sent, p)
	return consensus.TxResult{}, nil
}

func (s *recordingSubmitter) Account() terms.AccountID { return s.acct }

// TestDutyAbstainsAndRevealsAfterRestart: a member without the model's
// weights commits an abstention; a new Duty on the same votes file (a
// restart between commit and reveal) reveals that verdict with the salt
// the commitment hides, then forgets it.
func TestDutyAbstainsAndRevealsAfterRestart(t *testing.T) {
	id, me := terms.Hash32{1}, terms.AccountID{7}
	chain := &fakeDutyChain{duties: []ledger.Duty{{Dispute: id, Round: 1, Action: ledger.DutyCommit, Model: terms.Hash32{9}, Deadline: 10}}}
	sub := &recordingSubmitter{acct: me}
	path := filepath.Join(t.TempDir(), "home", "dispute-votes.json")
	d, err := NewDuty(DutyConfig{Chain: chain, Account: sub, VotesPath: path, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sub.sent) != 1 || d.Votes(ledger.VerdictAbstain) != 1 {
		t.Fatalf("commit: sent %+v, %v abstentions counted", sub.sent, d.Votes(ledger.VerdictAbstain))
	}
	committed := sub.sent[0].(*ledger.DisputeVote).Commitment

	chain.duties[0].Action = ledger.DutyReveal
	restarted, err := NewDuty(DutyConfig{Chain: chain, Account: sub, VotesPath: path, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := restarted.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	rv := sub.sent[1].(*ledger.DisputeVote).Reveal
	if rv == nil || rv.Verdict != ledger.VerdictAbstain || ledger.VoteCommitment(id, 1, me, rv.Verdict, rv.Salt) != committed {
		t.Fatalf("reveal after restart %+v does not open commitment %s", rv, committed)
	}
	if _, ok := restarted.store.get(id, 1); ok {
		t.Fatal("a revealed vote is still kept")
	}
	if len(sub.sent) != 2 {
		t.Fatalf("revealed %d times", len(sub.sent)-1)
	}
	if err := restarted.Step(context.Background()); err != nil || len(sub.sent) != 2 {
		t.Fatalf("a duty listed again after its reveal (a stale read): %v, %d sent", err, len(sub.sent))
	}
	// Another process, with the saved vote gone, cannot reveal and says so.
	lost, err := NewDuty(DutyConfig{Chain: chain, Account: sub, VotesPath: path, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := lost.Step(context.Background()); err == nil {
		t.Fatal("a reveal without its saved vote passed silently")
	}
}

// TestJudgeRefusesTamperedEvidence: honest evidence is innocent; tokens
// altered by the disputer (which would fail the proofs) are caught by the
// signed tokens hash and found innocent, not guilty; an input other than
// the signed one likewise.
func TestJudgeRefusesTamperedEvidence(t *testing.T) {
	eng := openGenerated(t, filepath.Join(t.TempDir(), "m"), modelgen.DevnetOptions())
	a := generateAnswer(t, eng, 3)
	m := testMachine(t, filepath.Join(t.TempDir(), "machine"))
	ctx := context.Background()
	ev := signAnswer(t, m, eng.Info().ID, make([]byte, 16), a)
	if v, why, err := judge(ctx, eng, ev, commit.DefaultTolerance); v != ledger.VerdictInnocent || err != nil {
		t.Fatalf("honest evidence: %s %s %v", v, why, err)
	}
	tampered := ev
	tampered.Tokens = append([]uint32{}, ev.Tokens...)
	tampered.Tokens[0] = (tampered.Tokens[0] + 1) % uint32(eng.Info().VocabSize)
	if v, _, err := judge(ctx, eng, tampered, commit.DefaultTolerance); v != ledger.VerdictInnocent || err == nil {
		t.Fatalf("altered tokens: %s %v, want innocent for unverifiable evidence", v, err)
	}
	other := ev
	other.Input, _ = EncodeDisputeInput(DisputeInput{Chat: true, Messages: []terms.Message{{Role: "user", Content: "something else"}}, Sampling: a.in.Sampling})
	if v, _, err := judge(ctx, eng, other, commit.DefaultTolerance); v != ledger.VerdictInnocent || err == nil {
		t.Fatalf("another input: %s %v, want innocent for unverifiable evidence", v, err)
	}
}

// refusingBatch is a batch submitter whose mempool refuses the first vote
// it is ever sent, leaving the rest of that batch unsent as
// consensus.Submitter does.
type refusingBatch struct {
	recordingSubmitter
	batches [][]any
}

func (s *refusingBatch) SubmitMany(_ context.Context, ps []any) ([]consensus.TxResult, []error) {
	s.batches = append(s.batches, ps)
	errs := make([]error, len(ps))
	if len(s.batches) == 1 {
		errs[0] = &ledger.TxError{Code: ledger.CodeWrongPhase, Msg: "refused"}
		for i := 1; i < len(ps); i++ {
			errs[i] = consensus.ErrNotSent
		}
		return make([]consensus.TxResult, len(ps)), errs
	}
	s.sent = append(s.sent, ps...)
	return make([]consensus.TxResult, len(ps)), errs
}

// TestDutyRefusedVoteDoesNotStallBatch: one vote the mempool refuses costs
// only itself: the votes queued behind it are sent again in the same pass,
// in deadline order, and the refusal is reported.
func TestDutyRefusedVoteDoesNotStallBatch(t *testing.T) {
	me := terms.AccountID{7}
	var duties []ledger.Duty
	for i, deadline := range []int64{30, 10, 20} {
		duties = append(duties, ledger.Duty{Dispute: terms.Hash32{byte(i + 1)}, Round: 1, Action: ledger.DutyCommit, Model: terms.Hash32{9}, Deadline: deadline})
	}
	sub := &refusingBatch{recordingSubmitter: recordingSubmitter{acct: me}}
	d, err := NewDuty(DutyConfig{Chain: &fakeDutyChain{duties: duties}, Account: sub,
		VotesPath: filepath.Join(t.TempDir(), "dispute-votes.json"), Log: quietLog, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Step(context.Background())
	if err == nil || ledger.CodeOf(err) != ledger.CodeWrongPhase {
		t.Fatalf("the refused vote was not reported: %v", err)
	}
	if len(sub.batches) != 2 || len(sub.batches[0]) != 3 || len(sub.sent) != 2 {
		t.Fatalf("batches %d (first of %d), %d votes sent after the refusal; want 3 tried, then the 2 behind it", len(sub.batches), len(sub.batches[0]), len(sub.sent))
	}
	order := []terms.Hash32{{2}, {3}, {1}} // deadlines 10, 20, 30
	for i, p := range sub.batches[0] {
		if v := p.(*ledger.DisputeVote); v.ID != order[i] || v.Commitment == (terms.Hash32{}) {
			t.Fatalf("vote %d of the batch: %+v, want a commitment on %s (nearest deadline first)", i, v, order[i])
		}
	}
	if d.Votes(ledger.VerdictAbstain) != 3 {
		t.Fatalf("%v abstentions decided, want 3", d.Votes(ledger.VerdictAbstain))
	}
}
