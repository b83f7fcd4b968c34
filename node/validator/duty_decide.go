package validator

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// deciders re-execute the disputed answers of pending commit duties in the
// background, at most Workers at once, nearest deadline first. Decisions
// outlive the pass of Step that offered them: a member on many committees
// keeps re-executing while the votes already decided go out, so one slow
// answer never holds back the others' commitments or any reveal.
type deciders struct {
	d       *Duty
	workers int

	mu       sync.Mutex
	pending  map[string]ledger.Duty // offered, not started
	inflight map[string]bool
	running  int
	errs     []error       // decision failures since the last drain
	changed  chan struct{} // closed and replaced whenever a decision ends
	wg       sync.WaitGroup
}

func newDeciders(d *Duty, workers int) *deciders {
	return &deciders{d: d, workers: max(workers, 1), pending: map[string]ledger.Duty{},
		inflight: map[string]bool{}, changed: make(chan struct{})}
}

// offer makes duties the pending set (commit duties read now that have no
// saved verdict); a duty no longer listed (its phase ended) is dropped.
// Workers start up to the limit; they run on ctx.
func (ds *deciders) offer(ctx context.Context, duties []ledger.Duty) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	clear(ds.pending)
	for _, du := range duties {
		k := voteKey(du.Dispute, du.Round)
		// A verdict is saved before its duty leaves inflight, so a duty
		// is never decided twice (a second salt would break the reveal).
		if ds.inflight[k] {
			continue
		}
		if _, ok := ds.d.store.get(du.Dispute, du.Round); ok {
			continue
		}
		ds.pending[k] = du
	}
	for ds.running < ds.workers && ds.running < len(ds.pending) {
		ds.running++
		ds.wg.Add(1)
		go ds.work(ctx)
	}
}

// next takes the pending duty with the nearest deadline.
func (ds *deciders) next() (ledger.Duty, string, bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	var best ledger.Duty
	bestKey := ""
	for k, du := range ds.pending {
		if bestKey == "" || du.Deadline < best.Deadline || (du.Deadline == best.Deadline && k < bestKey) {
			best, bestKey = du, k
		}
	}
	if bestKey == "" {
		ds.running--
		return ledger.Duty{}, "", false
	}
	delete(ds.pending, bestKey)
	ds.inflight[bestKey] = true
	return best, bestKey, true
}

func (ds *deciders) work(ctx context.Context) {
	defer ds.wg.Done()
	for {
		du, k, ok := ds.next()
		if !ok {
			return
		}
		err := ds.d.decideAndSave(ctx, du)
		ds.mu.Lock()
		delete(ds.inflight, k)
		if err != nil && ctx.Err() == nil {
			ds.errs = append(ds.errs, fmt.Errorf("dispute %s round %d commit: %w", du.Dispute, du.Round, err))
		}
		close(ds.changed)
		ds.changed = make(chan struct{})
		ds.mu.Unlock()
	}
}

// wait returns when no decision is pending or running, or after at most
// limit: what is decided by then goes out in this pass.
func (ds *deciders) wait(ctx context.Context, limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		ds.mu.Lock()
		idle, ch := len(ds.pending) == 0 && len(ds.inflight) == 0, ds.changed
		ds.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// drain returns the decision failures since the last call.
func (ds *deciders) drain() error {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	err := errors.Join(ds.errs...)
	ds.errs = nil
	return err
}

// decideAndSave re-executes a commit duty's answer and saves the verdict
// with a fresh salt; a failure (the engine, the evidence query) is this
// member's, so nothing is saved and the next pass offers the duty again.
func (d *Duty) decideAndSave(ctx context.Context, du ledger.Duty) error {
	verdict, why, err := d.decide(ctx, du)
	if err != nil {
		return err
	}
	v := savedVote{Verdict: verdict}
	if _, err := rand.Read(v.Salt[:]); err != nil {
		return fmt.Errorf("validator: salt: %w", err)
	}
	// On disk before the commitment leaves: a commitment without its
	// salt can never be revealed.
	if err := d.store.put(du.Dispute, du.Round, v); err != nil {
		return err
	}
	d.votes.WithLabelValues(verdict.String()).Inc()
	d.cfg.Log.Info("dispute verdict", "dispute", du.Dispute, "round", du.Round, "model", du.Model,
		"provider", du.Provider, "verdict", verdict, "why", why)
	return nil
}
