package validator

import (
	"context"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// batchSubmitter is a Submitter that can send many transactions to
// share blocks (consensus.Submitter): a member on many committees must
// get every commitment in before the commit phase ends.
type batchSubmitter interface {
	SubmitMany(ctx context.Context, payloads []any) ([]consensus.TxResult, []error)
}

// sendWaitPolls bounds, in polls (about a block each), how long one pass
// waits for all its votes to commit: the submitter bounds each wait, but a
// batch waits for its votes one after another.
const sendWaitPolls = 100

// send submits votes in order and returns one error per vote. A vote the
// mempool refuses leaves the later ones unsent (consensus.ErrNotSent);
// those are sent again at once, so one refused vote costs the others
// nothing.
func (d *Duty) send(ctx context.Context, votes []*ledger.DisputeVote) []error {
	errs := make([]error, len(votes))
	if len(votes) == 0 {
		return errs
	}
	ctx, cancel := context.WithTimeout(ctx, sendWaitPolls*d.cfg.Poll)
	defer cancel()
	b, ok := d.cfg.Account.(batchSubmitter)
	if !ok {
		for i, v := range votes {
			_, errs[i] = d.cfg.Account.Submit(ctx, v)
		}
		return errs
	}
	for from := 0; from < len(votes); {
		payloads := make([]any, 0, len(votes)-from)
		for _, v := range votes[from:] {
			payloads = append(payloads, v)
		}
		_, got := b.SubmitMany(ctx, payloads)
		copy(errs[from:], got)
		next := len(votes)
		for i, err := range got {
			if errors.Is(err, consensus.ErrNotSent) {
				next = from + i
				break
			}
		}
		// Each round sends at least the vote that was refused, so the
		// loop ends.
		if next == from {
			break
		}
		from = next
	}
	return errs
}

// submitted settles one vote's submission.
func (d *Duty) submitted(du ledger.Duty, vote *ledger.DisputeVote, err error) error {
	if vote.Reveal == nil {
		// Already voted: an earlier pass's commitment landed after the
		// duties were read; it is the saved vote's, so nothing is lost.
		if err != nil && ledger.CodeOf(err) != ledger.CodeAlreadyVoted {
			return fmt.Errorf("validator: submit commitment: %w", err)
		}
		return nil
	}
	switch {
	case err == nil:
		d.cfg.Log.Info("dispute vote revealed", "dispute", du.Dispute, "round", du.Round, "verdict", vote.Reveal.Verdict)
	case ledger.CodeOf(err) == ledger.CodeWrongPhase:
		// The other members' reveals decided it first: nothing is lost.
		d.cfg.Log.Info("dispute decided before this reveal", "dispute", du.Dispute, "round", du.Round, "verdict", vote.Reveal.Verdict)
	default:
		return fmt.Errorf("validator: submit reveal: %w", err)
	}
	d.revealed[voteKey(du.Dispute, du.Round)] = true
	return d.store.drop(du.Dispute, du.Round)
}
