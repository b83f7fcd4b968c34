package validator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// DutyChain is what the committee duty reads of the chain.
type DutyChain interface {
	Duties(ctx context.Context, me terms.AccountID) ([]ledger.Duty, error)
	DisputeEvidence(ctx context.Context, id terms.Hash32) (ledger.DisputeEvidence, bool, error)
}

// DutyConfig assembles the committee duty of one validator.
type DutyConfig struct {
	Chain   DutyChain
	Account Submitter
	// Models are the engines of the weights this validator declared,
	// by model ID; a duty on any other model abstains.
	Models map[terms.Hash32]inference.Engine
	// VotesPath is the file the committed verdicts and salts live in.
	VotesPath string
	// Poll is how often duties are read (about a block); 0 means 1 s.
	Poll      time.Duration
	Tolerance commit.Tolerance // zero means commit.DefaultTolerance
	// Workers is how many disputed answers are re-executed at once (0
	// means 1); each runs on the engine's own threads, so more than one
	// pays only where an engine cannot use every core.
	Workers int
	Log     *slog.Logger
	// Metrics, when set, gets tenzro_validator_dispute_votes_total.
	Metrics prometheus.Registerer
}

// Duty re-executes disputed answers on the committees this validator is
// drawn on, and commits then reveals its verdicts.
type Duty struct {
	cfg   DutyConfig
	store *voteStore
	votes *prometheus.CounterVec
	dec   *deciders

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
	d.dec = newDeciders(d, cfg.Workers)
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
	// Re-executions check ctx between layers, so they end soon after it.
	defer d.dec.wg.Wait()
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

// Step does every duty due now: one pass of the loop. It offers the
// commit duties without a verdict to the deciders, waits for them at most
// a poll, then submits every vote that is ready (reveals and the
// commitments of saved verdicts) together, nearest deadline first.
func (d *Duty) Step(ctx context.Context) error {
	me := d.cfg.Account.Account()
	duties, err := d.cfg.Chain.Duties(ctx, me)
	if err != nil {
		return fmt.Errorf("validator: duties: %w", err)
	}
	slices.SortStableFunc(duties, func(a, b ledger.Duty) int { return cmp.Compare(a.Deadline, b.Deadline) })
	var undecided []ledger.Duty
	listed := map[string]bool{}
	for _, du := range duties {
		listed[voteKey(du.Dispute, du.Round)] = true
		if _, ok := d.store.get(du.Dispute, du.Round); du.Action == ledger.DutyCommit && !ok {
			undecided = append(undecided, du)
		}
	}
	// A reveal is remembered only while its duty can still be listed.
	for k := range d.revealed {
		if !listed[k] {
			delete(d.revealed, k)
		}
	}
	if len(undecided) > 0 {
		d.dec.offer(ctx, undecided)
		d.dec.wait(ctx, d.cfg.Poll)
	}
	errs := []error{d.dec.drain()}
	var due []ledger.Duty
	var votes []*ledger.DisputeVote
	for _, du := range duties {
		var vote *ledger.DisputeVote
		switch du.Action {
		case ledger.DutyCommit:
			v, ok := d.store.get(du.Dispute, du.Round)
			if !ok {
				continue // still being decided
			}
			vote = &ledger.DisputeVote{ID: du.Dispute, Round: du.Round, Commitment: ledger.VoteCommitment(du.Dispute, du.Round, me, v.Verdict, v.Salt)}
		case ledger.DutyReveal:
			if d.revealed[voteKey(du.Dispute, du.Round)] {
				continue
			}
			if vote, err = d.revealVote(du); err != nil {
				errs = append(errs, fmt.Errorf("dispute %s round %d %s: %w", du.Dispute, du.Round, du.Action, err))
				continue
			}
		default:
			continue
		}
		due, votes = append(due, du), append(votes, vote)
	}
	for i, err := range d.send(ctx, votes) {
		if err := d.submitted(due[i], votes[i], err); err != nil {
			errs = append(errs, fmt.Errorf("dispute %s round %d %s: %w", due[i].Dispute, due[i].Round, due[i].Action, err))
		}
	}
	return errors.Join(errs...)
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
	var v ledger.Verdict
	var why string
	if isBatch(ev) {
		v, why, err = judgeBatch(ctx, eng, ev)
	} else {
		v, why, err = judge(ctx, eng, ev, d.cfg.Tolerance)
	}
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
