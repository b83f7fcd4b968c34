package validator

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
)

// DutyChain is what the committee duty reads of the chain.
type DutyChain interface {
	Duties(ctx context.Context, me consensus.AccountID) ([]ledger.Duty, error)
	DisputeEvidence(ctx context.Context, id consensus.Hash32) (ledger.DisputeEvidence, bool, error)
}

// DutyConfig assembles the committee duty of one validator.
type DutyConfig struct {
	Chain   DutyChain
	Account Submitter
	// Models are the engines of the weights this validator declared,
	// by model ID; a duty on any other model abstains.
	Models map[ledger.Hash32]inference.Engine
	// VotesPath is the file the committed verdicts and salts live in.
	VotesPath string
	// Poll is how often duties are read (about a block); 0 means 1 s.
	Poll      time.Duration
	Tolerance commit.Tolerance // zero means commit.DefaultTolerance
	Log       *slog.Logger
	// Metrics, when set, gets tenzro_validator_dispute_votes_total.
	Metrics prometheus.Registerer
}

// Duty re-executes disputed answers on the committees this validator is
// drawn on, and commits then reveals its verdicts.
type Duty struct {
	cfg   DutyConfig
	store *voteStore
	votes *prometheus.CounterVec

	// revealed are the votes this process revealed: duties read at a
	// height before the reveal landed list them again.
	revealed map[string]bool

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewDuty checks cfg and opens the votes file.
func NewDuty(cfg DutyConfig) (*Duty, error) {
	if cfg.Chain == nil || cfg.Account == nil || cfg.VotesPath == "" {
		return nil, errors.New("validator: duty needs a chain, an account and a votes path")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Tolerance == (commit.Tolerance{}) {
		cfg.Tolerance = commit.DefaultTolerance
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	st, err := openVoteStore(cfg.VotesPath)
	if err != nil {
		return nil, err
	}
	d := &Duty{cfg: cfg, store: st, revealed: map[string]bool{}, votes: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tenzro_validator_dispute_votes_total", Help: "Dispute verdicts this validator committed, by verdict.",
	}, []string{"verdict"})}
	if cfg.Metrics != nil {
		if err := cfg.Metrics.Register(d.votes); err != nil {
			return nil, fmt.Errorf("validator: register duty metrics: %w", err)
		}
	}
	return d, nil
}

// Start declares the held models, then runs the duty loop until Stop.
func (d *Duty) Start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancel != nil {
		return errors.New("validator: duty already started")
	}
	ctx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
	d.done = make(chan struct{})
	go d.run(ctx)
	return nil
}

// Stop ends the loop and waits for it.
func (d *Duty) Stop(ctx context.Context) error {
	d.mu.Lock()
	cancel, done := d.cancel, d.done
	d.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("validator: stop duty: %w", ctx.Err())
	}
}

func (d *Duty) run(ctx context.Context) {
	defer close(d.done)
	d.declare(ctx)
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	for {
		if err := d.Step(ctx); err != nil && ctx.Err() == nil {
			d.cfg.Log.Warn("dispute duty", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Votes is how many verdicts v this validator committed.
func (d *Duty) Votes(v ledger.Verdict) float64 {
	var m dto.Metric
	if err := d.votes.WithLabelValues(v.String()).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// batchSubmitter is a Submitter that can send many transactions to
// share blocks (consensus.Submitter): a member on many committees must
// get every commitment in before the commit phase ends.
type batchSubmitter interface {
	SubmitMany(ctx context.Context, payloads []any) ([]consensus.TxResult, []error)
}

// Step does every duty due now: one pass of the loop. It prepares every
// vote first (re-executing for commits), then submits them together.
func (d *Duty) Step(ctx context.Context) error {
	me := d.cfg.Account.Account()
	duties, err := d.cfg.Chain.Duties(ctx, me)
	if err != nil {
		return fmt.Errorf("validator: duties: %w", err)
	}
	// Nearest deadline first, and what is ready goes out at least every
	// poll: re-executing many answers must not hold back the votes
	// already decided past their deadline.
	slices.SortStableFunc(duties, func(a, b ledger.Duty) int { return cmp.Compare(a.Deadline, b.Deadline) })
	var errs []error
	var due []ledger.Duty
	var votes []any
	flush := func() {
		for i, err := range d.submit(ctx, votes) {
			if err := d.submitted(due[i], votes[i].(*ledger.DisputeVote), err); err != nil {
				errs = append(errs, fmt.Errorf("dispute %s round %d %s: %w", due[i].Dispute, due[i].Round, due[i].Action, err))
			}
		}
		due, votes = nil, nil
	}
	batchStart := time.Now()
	for _, du := range duties {
		if len(votes) > 0 && time.Since(batchStart) >= d.cfg.Poll {
			flush()
			batchStart = time.Now()
		}
		var vote *ledger.DisputeVote
		switch du.Action {
		case ledger.DutyCommit:
			vote, err = d.commitVote(ctx, du)
		case ledger.DutyReveal:
			if d.revealed[voteKey(du.Dispute, du.Round)] {
				continue
			}
			vote, err = d.revealVote(du)
		default:
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("dispute %s round %d %s: %w", du.Dispute, du.Round, du.Action, err))
			continue
		}
		due, votes = append(due, du), append(votes, vote)
	}
	flush()
	return errors.Join(errs...)
}

func (d *Duty) submit(ctx context.Context, votes []any) []error {
	if b, ok := d.cfg.Account.(batchSubmitter); ok && len(votes) > 1 {
		_, errs := b.SubmitMany(ctx, votes)
		return errs
	}
	errs := make([]error, len(votes))
	for i, v := range votes {
		_, errs[i] = d.cfg.Account.Submit(ctx, v)
	}
	return errs
}

// submitted settles one vote's submission.
func (d *Duty) submitted(du ledger.Duty, vote *ledger.DisputeVote, err error) error {
	if vote.Reveal == nil {
		// Already voted: an earlier pass's commitment landed after the
		// duties were read; it is the saved vote's, so nothing is lost.
		if err != nil && consensus.CodeOf(err) != ledger.CodeAlreadyVoted {
			return fmt.Errorf("validator: submit commitment: %w", err)
		}
		return nil
	}
	switch {
	case err == nil:
		d.cfg.Log.Info("dispute vote revealed", "dispute", du.Dispute, "round", du.Round, "verdict", vote.Reveal.Verdict)
	case consensus.CodeOf(err) == ledger.CodeWrongPhase:
		// The other members' reveals decided it first: nothing is lost.
		d.cfg.Log.Info("dispute decided before this reveal", "dispute", du.Dispute, "round", du.Round, "verdict", vote.Reveal.Verdict)
	default:
		return fmt.Errorf("validator: submit reveal: %w", err)
	}
	d.revealed[voteKey(du.Dispute, du.Round)] = true
	return d.store.drop(du.Dispute, du.Round)
}

// commitVote decides a commit duty's verdict (once: a saved one is
// reused), saves it and returns the commitment.
func (d *Duty) commitVote(ctx context.Context, du ledger.Duty) (*ledger.DisputeVote, error) {
	me := d.cfg.Account.Account()
	v, ok := d.store.get(du.Dispute, du.Round)
	if !ok {
		verdict, why, err := d.decide(ctx, du)
		if err != nil {
			return nil, err
		}
		v = savedVote{Verdict: verdict}
		if _, err := rand.Read(v.Salt[:]); err != nil {
			return nil, fmt.Errorf("validator: salt: %w", err)
		}
		// On disk before the commitment leaves: a commitment without
		// its salt can never be revealed.
		if err := d.store.put(du.Dispute, du.Round, v); err != nil {
			return nil, err
		}
		d.votes.WithLabelValues(verdict.String()).Inc()
		d.cfg.Log.Info("dispute verdict", "dispute", du.Dispute, "round", du.Round, "model", du.Model,
			"provider", du.Provider, "verdict", verdict, "why", why)
	}
	c := ledger.VoteCommitment(du.Dispute, du.Round, me, v.Verdict, v.Salt)
	return &ledger.DisputeVote{ID: du.Dispute, Round: du.Round, Commitment: c}, nil
}

// decide finds the verdict of a commit duty.
func (d *Duty) decide(ctx context.Context, du ledger.Duty) (ledger.Verdict, string, error) {
	eng, ok := d.cfg.Models[du.Model]
	if !ok {
		return ledger.VerdictAbstain, "this validator does not hold the model's weights", nil
	}
	ev, found, err := d.cfg.Chain.DisputeEvidence(ctx, du.Dispute)
	if err != nil {
		return ledger.VerdictNone, "", fmt.Errorf("validator: evidence: %w", err)
	}
	if !found {
		return ledger.VerdictNone, "", errors.New("validator: the dispute has no evidence on chain")
	}
	v, why, err := judge(ctx, eng, ev, d.cfg.Tolerance)
	switch {
	case errors.Is(err, errUnverifiable), errors.Is(err, errCannotTell):
		return v, err.Error(), nil
	case err != nil:
		return ledger.VerdictNone, "", err
	}
	return v, why, nil
}

func (d *Duty) revealVote(du ledger.Duty) (*ledger.DisputeVote, error) {
	v, ok := d.store.get(du.Dispute, du.Round)
	if !ok {
		return nil, errors.New("validator: no saved verdict for a committed vote (the votes file was lost)")
	}
	return &ledger.DisputeVote{ID: du.Dispute, Round: du.Round, Reveal: &ledger.VoteReveal{Verdict: v.Verdict, Salt: v.Salt}}, nil
}
