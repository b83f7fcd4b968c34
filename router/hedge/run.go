package hedge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/router/strategy"
)

type result[R any] struct {
	try int
	val R
	err error
}

// runner is the state of one Run; only Run's goroutine touches it.
type runner[R any] struct {
	ctx     context.Context
	cands   []strategy.Candidate
	attempt AttemptFunc[R]
	opt     Options
	clk     clock.Clock
	start   time.Time

	used    []bool
	results chan result[R]
	cancels map[int]context.CancelFunc // in-flight tries
	rep     Report
}

// Run serves one request over cands, best first (a strategy ranking):
//
//  1. It sends the request to the best eligible candidate (the primary).
//  2. If no answer has come by Delay(primary) and the request may hedge,
//     it sends it to the next eligible candidate too: at most one hedge per
//     request, never a hedge of a hedge.
//  3. The first success wins; every other attempt's context is cancelled
//     and only the winner is reported as having served.
//  4. A PermanentError is returned at once, cancelling any other attempt.
//  5. When every attempt of a round has failed, those candidates are out
//     for this request and the next round starts with the next-best
//     eligible one, up to MaxRetries rounds after the first.
//  6. Deadline (and ctx) bound the whole: when it passes every attempt is
//     cancelled and the error wraps ErrDeadline.
//
// The Report is returned in every case.
func Run[R any](ctx context.Context, cands []strategy.Candidate, attempt AttemptFunc[R], opt Options) (R, Report, error) {
	clk := opt.Clock
	if clk == nil {
		clk = clock.New()
	}
	if opt.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = clk.WithTimeout(ctx, opt.Deadline)
		defer cancel()
	}
	r := &runner[R]{ctx: ctx, cands: cands, attempt: attempt, opt: opt, clk: clk, start: clk.Now(),
		used: make([]bool, len(cands)), results: make(chan result[R], len(cands)),
		cancels: make(map[int]context.CancelFunc)}
	v, err := r.run()
	r.rep.Elapsed = clk.Since(r.start)
	return v, r.rep, err
}

func (r *runner[R]) run() (R, error) {
	var zero R
	var lastErr error
	hedged := false
	for round := 0; ; round++ {
		if round > r.opt.maxRetries() {
			return zero, wrapf(ErrExhausted, fmt.Sprintf("%d rounds, %d attempts", round, len(r.rep.Tries)), lastErr)
		}
		if err := r.ctx.Err(); err != nil {
			return zero, r.stop(err)
		}
		primary := r.pick()
		if primary < 0 {
			if len(r.rep.Tries) == 0 {
				return zero, wrapf(ErrNoCandidate, fmt.Sprintf("%d candidates", len(r.cands)), nil)
			}
			return zero, wrapf(ErrExhausted, fmt.Sprintf("no candidate left after %d attempts", len(r.rep.Tries)), lastErr)
		}
		if round > 0 {
			r.rep.Failovers++
		}
		r.dispatch(primary, round, false)
		active := 1
		var timer *clock.Timer
		var fire <-chan time.Time
		if !r.opt.NoHedge && !hedged {
			d := Delay(r.cands[primary])
			if r.opt.DelayFor != nil {
				d = r.opt.DelayFor(r.cands[primary])
			}
			timer = r.clk.Timer(d)
			fire = timer.C
		}
		for active > 0 {
			select {
			case <-fire:
				fire = nil
				if h := r.pick(); h >= 0 {
					hedged = true
					r.rep.HedgesDispatched++
					r.dispatch(h, round, true)
					active++
				}
			case res := <-r.results:
				active--
				t := &r.rep.Tries[res.try]
				delete(r.cancels, res.try)
				t.Elapsed, t.Err = r.clk.Since(r.start)-t.Start, res.err
				switch {
				case res.err == nil:
					t.Fate = Won
					r.rep.Winner, r.rep.HedgeWon = t.Peer, t.Hedge
					r.cancelAll()
					stopTimer(timer)
					return res.val, nil
				case IsPermanent(res.err):
					t.Fate = Rejected
					r.cancelAll()
					stopTimer(timer)
					return zero, fmt.Errorf("hedge: %s refused the request: %w", t.Peer, res.err)
				case r.ctx.Err() != nil: // the attempt saw our deadline first
					t.Fate = Cancelled
					stopTimer(timer)
					return zero, r.stop(r.ctx.Err())
				default:
					t.Fate = Failed
					lastErr = fmt.Errorf("%s: %w", t.Peer, res.err)
				}
			case <-r.ctx.Done():
				stopTimer(timer)
				return zero, r.stop(r.ctx.Err())
			}
		}
		stopTimer(timer)
	}
}

// pick returns the best candidate not yet tried that is still eligible,
// or -1.
func (r *runner[R]) pick() int {
	for i, c := range r.cands {
		if !r.used[i] && (r.opt.Eligible == nil || r.opt.Eligible(c)) {
			return i
		}
	}
	return -1
}

func (r *runner[R]) dispatch(i, round int, hedge bool) {
	r.used[i] = true
	c := r.cands[i]
	ti := len(r.rep.Tries)
	r.rep.Tries = append(r.rep.Tries, Try{Peer: c.Peer, Round: round, Hedge: hedge, Start: r.clk.Since(r.start)})
	actx := r.ctx
	if r.opt.LabelAttempts {
		actx = context.WithValue(actx, dispatchKey{}, Dispatch{Round: round, Hedge: hedge})
	}
	actx, cancel := context.WithCancel(actx)
	r.cancels[ti] = cancel
	go func() {
		v, err := r.attempt(actx, c)
		r.results <- result[R]{try: ti, val: v, err: err} // buffered: never blocks
	}()
}

// cancelAll cancels every attempt still in flight and records it so.
func (r *runner[R]) cancelAll() {
	now := r.clk.Since(r.start)
	for ti, cancel := range r.cancels {
		cancel()
		t := &r.rep.Tries[ti]
		t.Fate, t.Elapsed = Cancelled, now-t.Start
	}
	clear(r.cancels)
}

// stop ends the request because ctx is done.
func (r *runner[R]) stop(err error) error {
	r.cancelAll()
	if errors.Is(err, context.DeadlineExceeded) {
		r.rep.DeadlineMiss = true
		return fmt.Errorf("%w after %v: %w", ErrDeadline, r.clk.Since(r.start), err)
	}
	return fmt.Errorf("hedge: request cancelled: %w", err)
}

func stopTimer(t *clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// Dispatch is how Run sent one attempt: its failover round and whether it
// is the hedge. With Options.LabelAttempts the attempt's context carries it
// (DispatchOf), for callers that label attempts (tracing) as the Report does.
type Dispatch struct {
	Round int
	Hedge bool
}

type dispatchKey struct{}

// DispatchOf returns the Dispatch of the attempt whose context is ctx.
func DispatchOf(ctx context.Context) (Dispatch, bool) {
	d, ok := ctx.Value(dispatchKey{}).(Dispatch)
	return d, ok
}
