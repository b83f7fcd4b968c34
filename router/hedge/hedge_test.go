package hedge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/router/strategy"
)

const ms = time.Millisecond

// provider is a simulated provider: it answers after lat with err.
type provider struct {
	lat time.Duration
	err error
}

// fakes records what each simulated provider saw, on the bubble's clock.
type fakes struct {
	t0    time.Time
	provs map[peer.ID]provider

	mu        sync.Mutex
	started   map[peer.ID]time.Duration
	cancelled map[peer.ID]time.Duration
}

func newFakes(provs map[peer.ID]provider) *fakes {
	return &fakes{t0: time.Now(), provs: provs, started: map[peer.ID]time.Duration{},
		cancelled: map[peer.ID]time.Duration{}}
}

func (f *fakes) attempt(ctx context.Context, c strategy.Candidate) (string, error) {
	p := f.provs[c.Peer]
	f.mu.Lock()
	f.started[c.Peer] = time.Since(f.t0)
	f.mu.Unlock()
	t := time.NewTimer(p.lat)
	defer t.Stop()
	select {
	case <-t.C:
		if p.err != nil {
			return "", p.err
		}
		return "answer from " + string(c.Peer), nil
	case <-ctx.Done():
		f.mu.Lock()
		f.cancelled[c.Peer] = time.Since(f.t0)
		f.mu.Unlock()
		return "", ctx.Err()
	}
}

func cands(p95 time.Duration, ids ...string) []strategy.Candidate {
	out := make([]strategy.Candidate, len(ids))
	for i, id := range ids {
		out[i] = strategy.Candidate{Peer: peer.ID(id), P95: p95, LatencyKnown: p95 > 0, Up: true, BreakerReady: true}
	}
	return out
}

func fates(r Report) string {
	s := ""
	for _, t := range r.Tries {
		role := "p"
		if t.Hedge {
			role = "h"
		}
		s += fmt.Sprintf("%s/%s/r%d/%s ", string(t.Peer), role, t.Round, t.Fate)
	}
	return s
}

func TestDelayClamp(t *testing.T) {
	for _, c := range []struct {
		p95   time.Duration
		known bool
		want  time.Duration
	}{
		{0, false, MaxDelay}, {10 * ms, true, MinDelay}, {123 * ms, true, 123 * ms},
		{2 * time.Second, true, MaxDelay}, {40 * ms, true, 40 * ms}, {500 * ms, true, 500 * ms},
	} {
		if got := Delay(strategy.Candidate{P95: c.p95, LatencyKnown: c.known}); got != c.want {
			t.Errorf("Delay(p95 %v known %v) = %v, want %v", c.p95, c.known, got, c.want)
		}
	}
}

func TestHedgeFiresOnlyAfterTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: time.Second}, "b": {lat: 10 * ms}})
		v, rep, err := Run(context.Background(), cands(100*ms, "a", "b"), f.attempt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if f.started["b"] != 100*ms || rep.Tries[1].Start != 100*ms {
			t.Fatalf("hedge started at %v (report %v), want exactly the 100ms p95", f.started["b"], rep.Tries[1].Start)
		}
		if v != "answer from b" || rep.Winner != "b" || !rep.HedgeWon || rep.Elapsed != 110*ms {
			t.Fatalf("got %q, report %+v", v, rep)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// The primary answers 1 ms before the delay: no hedge at all.
		f := newFakes(map[peer.ID]provider{"a": {lat: 99 * ms}, "b": {lat: ms}})
		_, rep, err := Run(context.Background(), cands(100*ms, "a", "b"), f.attempt, Options{})
		if err != nil || rep.HedgesDispatched != 0 || len(rep.Tries) != 1 || len(f.started) != 1 {
			t.Fatalf("err %v, report %+v, started %v", err, rep, f.started)
		}
		time.Sleep(time.Second) // the stopped hedge timer must not fire later
		synctest.Wait()
		if len(f.started) != 1 {
			t.Fatalf("a hedge started after the request ended: %v", f.started)
		}
	})
}

func TestHedgeDelayIsClamped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct{ p95, want time.Duration }{{5 * ms, 40 * ms}, {0, 500 * ms}, {3 * time.Second, 500 * ms}} {
			f := newFakes(map[peer.ID]provider{"a": {lat: 10 * time.Second}, "b": {lat: ms}})
			_, rep, err := Run(context.Background(), cands(c.p95, "a", "b"), f.attempt, Options{})
			if err != nil || rep.Tries[1].Start != c.want {
				t.Fatalf("p95 %v: hedge at %v (%v), want %v", c.p95, rep.Tries[1].Start, err, c.want)
			}
		}
	})
}

func TestAtMostOneHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: 2 * time.Second}, "b": {lat: 3 * time.Second},
			"c": {lat: ms}, "d": {lat: ms}})
		v, rep, err := Run(context.Background(), cands(50*ms, "a", "b", "c", "d"), f.attempt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.HedgesDispatched != 1 || len(rep.Tries) != 2 || len(f.started) != 2 || v != "answer from a" {
			t.Fatalf("got %q; %s; started %v", v, fates(rep), f.started)
		}
		if rep.Tries[1].Hedge != true || rep.Tries[1].Peer != "b" || rep.HedgeWon {
			t.Fatalf("report %s", fates(rep))
		}
	})
}

func TestLoserIsCancelledAndOnlyTheWinnerReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: time.Second}, "b": {lat: 30 * ms}})
		v, rep, err := Run(context.Background(), cands(60*ms, "a", "b"), f.attempt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // let the loser's goroutine observe the cancellation
		if f.cancelled["a"] != 90*ms {
			t.Fatalf("loser saw ctx.Done at %v, want 90ms (when b answered); cancelled %v", f.cancelled["a"], f.cancelled)
		}
		if _, ok := f.cancelled["b"]; ok {
			t.Fatal("the winner was cancelled")
		}
		w, ok := winning(rep)
		if !ok || w.Peer != "b" || rep.Winner != "b" || v != "answer from b" {
			t.Fatalf("winner %+v %q", w, v)
		}
		if a := rep.Tries[0]; a.Fate != Cancelled || a.Elapsed != 90*ms {
			t.Fatalf("loser try %+v", a)
		}
		won := 0
		for _, tr := range rep.Tries {
			if tr.Fate == Won {
				won++
			}
		}
		if won != 1 {
			t.Fatalf("%d winners: %s", won, fates(rep))
		}
	})
}

func TestPrimaryWinsOverHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: 120 * ms}, "b": {lat: 500 * ms}})
		_, rep, err := Run(context.Background(), cands(100*ms, "a", "b"), f.attempt, Options{})
		synctest.Wait()
		if err != nil || rep.Winner != "a" || rep.HedgeWon || rep.HedgesDispatched != 1 || f.cancelled["b"] != 120*ms {
			t.Fatalf("err %v; %s; cancelled %v", err, fates(rep), f.cancelled)
		}
	})
}

func TestBothFailThenNextBest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("503")
		f := newFakes(map[peer.ID]provider{
			"a": {lat: 150 * ms, err: boom}, "b": {lat: 20 * ms, err: boom},
			"c": {lat: time.Second}, "d": {lat: ms},
		})
		v, rep, err := Run(context.Background(), cands(100*ms, "a", "b", "c", "d"), f.attempt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// a fails at 150, b (hedged at 100) fails at 120: round 1 starts at
		// 150 with c, which is slow, and no second hedge goes to d.
		if v != "answer from c" || rep.Failovers != 1 || rep.HedgesDispatched != 1 || len(rep.Tries) != 3 {
			t.Fatalf("got %q; %s", v, fates(rep))
		}
		if want := "a/p/r0/failed b/h/r0/failed c/p/r1/won "; fates(rep) != want {
			t.Fatalf("tries %s, want %s", fates(rep), want)
		}
		if f.started["c"] != 150*ms || rep.Elapsed != 1150*ms {
			t.Fatalf("c started at %v, request took %v", f.started["c"], rep.Elapsed)
		}
		if _, tried := f.started["d"]; tried {
			t.Fatal("d was tried")
		}
		per := rep.AttemptsPer()
		if per["a"] != 1 || per["b"] != 1 || per["c"] != 1 || per["d"] != 0 {
			t.Fatalf("attempts per candidate %v", per)
		}
	})
}

func TestFastFailureFailsOverAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: 5 * ms, err: errors.New("reset")},
			"b": {lat: time.Second}, "c": {lat: 10 * ms}})
		v, rep, err := Run(context.Background(), cands(100*ms, "a", "b", "c"), f.attempt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// b becomes primary at 5 ms and, no hedge having been used, is
		// hedged to c at 105 ms.
		if f.started["b"] != 5*ms || f.started["c"] != 105*ms || v != "answer from c" || !rep.HedgeWon {
			t.Fatalf("started %v; got %q; %s", f.started, v, fates(rep))
		}
	})
}

func TestPermanentErrorPassesThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tooLong := errors.New("400 context_length_exceeded")
		f := newFakes(map[peer.ID]provider{"a": {lat: 150 * ms, err: Permanent(tooLong)},
			"b": {lat: time.Second}, "c": {lat: ms}})
		_, rep, err := Run(context.Background(), cands(100*ms, "a", "b", "c"), f.attempt, Options{})
		synctest.Wait()
		if !errors.Is(err, tooLong) || !IsPermanent(err) {
			t.Fatalf("err %v, want the provider's reason, permanent", err)
		}
		if len(rep.Tries) != 2 || rep.Tries[0].Fate != Rejected || rep.Tries[1].Fate != Cancelled ||
			f.cancelled["b"] != 150*ms || rep.Winner != "" || rep.Failovers != 0 {
			t.Fatalf("%s; cancelled %v", fates(rep), f.cancelled)
		}
		if _, tried := f.started["c"]; tried {
			t.Fatal("a permanent error was retried")
		}
	})
	if Permanent(nil) != nil || IsPermanent(errors.New("x")) {
		t.Fatal("Permanent helpers")
	}
}

func TestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: time.Second}, "b": {lat: time.Second}})
		_, rep, err := Run(context.Background(), cands(100*ms, "a", "b"), f.attempt, Options{Deadline: 300 * ms})
		synctest.Wait()
		if !errors.Is(err, ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) || !rep.DeadlineMiss {
			t.Fatalf("err %v, report %+v", err, rep)
		}
		if rep.Elapsed != 300*ms || f.cancelled["a"] != 300*ms || f.cancelled["b"] != 300*ms {
			t.Fatalf("elapsed %v, cancelled %v", rep.Elapsed, f.cancelled)
		}
		if fates(rep) != "a/p/r0/cancelled b/h/r0/cancelled " {
			t.Fatalf("tries %s", fates(rep))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// The deadline also bounds failover rounds.
		f := newFakes(map[peer.ID]provider{"a": {lat: 200 * ms, err: errors.New("500")},
			"b": {lat: 50 * ms, err: errors.New("500")}, "c": {lat: time.Second}})
		_, rep, err := Run(context.Background(), cands(100*ms, "a", "b", "c"), f.attempt,
			Options{Deadline: 400 * ms})
		if !errors.Is(err, ErrDeadline) || rep.Failovers != 1 || rep.Elapsed != 400*ms {
			t.Fatalf("err %v; %s; elapsed %v", err, fates(rep), rep.Elapsed)
		}
	})
}

func TestCallerCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: time.Second}, "b": {lat: time.Second}})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(70*ms, cancel)
		_, rep, err := Run(ctx, cands(100*ms, "a", "b"), f.attempt, Options{})
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrDeadline) || rep.DeadlineMiss || rep.HedgesDispatched != 0 {
			t.Fatalf("err %v, report %+v", err, rep)
		}
	})
}

func TestRetriesAreBounded(t *testing.T) {
	boom := errors.New("503 always")
	all := map[peer.ID]provider{}
	ids := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, id := range ids {
		all[peer.ID(id)] = provider{lat: 10 * ms, err: boom}
	}
	for _, c := range []struct {
		retries, tries int
	}{{-1, 1}, {0, 3}, {1, 2}, {4, 5}} {
		synctest.Test(t, func(t *testing.T) {
			f := newFakes(all)
			_, rep, err := Run(context.Background(), cands(100*ms, ids...), f.attempt, Options{MaxRetries: c.retries})
			if !errors.Is(err, ErrExhausted) || !errors.Is(err, boom) || len(rep.Tries) != c.tries {
				t.Fatalf("MaxRetries %d: err %v, %d tries (%s), want %d", c.retries, err, len(rep.Tries), fates(rep), c.tries)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(all)
		_, rep, err := Run(context.Background(), cands(100*ms, "a", "b"), f.attempt, Options{MaxRetries: 5})
		if !errors.Is(err, ErrExhausted) || len(rep.Tries) != 2 {
			t.Fatalf("ran out of candidates: %v %s", err, fates(rep))
		}
	})
}

func TestNoHedgeOptOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: time.Second}, "b": {lat: ms}})
		v, rep, err := Run(context.Background(), cands(50*ms, "a", "b"), f.attempt, Options{NoHedge: true})
		if err != nil || v != "answer from a" || rep.HedgesDispatched != 0 || len(f.started) != 1 {
			t.Fatalf("%q %v %s", v, err, fates(rep))
		}
	})
}

func TestIneligibleCandidatesAreSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakes(map[peer.ID]provider{"a": {lat: time.Second}, "b": {lat: ms}, "c": {lat: 5 * ms}})
		var mu sync.Mutex
		open := map[peer.ID]bool{}
		time.AfterFunc(50*ms, func() { mu.Lock(); open["b"] = true; mu.Unlock() }) // b's breaker opens
		eligible := func(c strategy.Candidate) bool { mu.Lock(); defer mu.Unlock(); return !open[c.Peer] }
		v, rep, err := Run(context.Background(), cands(100*ms, "a", "b", "c"), f.attempt, Options{Eligible: eligible})
		if err != nil || v != "answer from c" || rep.Tries[1].Peer != "c" || !rep.Tries[1].Hedge {
			t.Fatalf("%q %v %s", v, err, fates(rep))
		}
		if _, tried := f.started["b"]; tried {
			t.Fatal("hedged to a provider whose breaker had opened")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		_, _, err := Run(context.Background(), cands(0, "a"), (&fakes{}).attempt,
			Options{Eligible: func(strategy.Candidate) bool { return false }})
		if !errors.Is(err, ErrNoCandidate) {
			t.Fatalf("no eligible: %v", err)
		}
		_, _, err = Run[string](context.Background(), nil, nil, Options{})
		if !errors.Is(err, ErrNoCandidate) {
			t.Fatalf("no candidates: %v", err)
		}
	})
}

func TestConcurrentRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		won := 0
		f := newFakes(map[peer.ID]provider{"a": {lat: 300 * ms}, "b": {lat: 20 * ms}, "c": {lat: 20 * ms}})
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, rep, err := Run(context.Background(), cands(60*ms, "a", "b", "c"), f.attempt, Options{})
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				if rep.HedgeWon {
					won++
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if won != 50 {
			t.Fatalf("%d of 50 requests won by the hedge", won)
		}
	})
}

// winning returns the try of rep that won, if any.
func winning(rep Report) (Try, bool) {
	for _, t := range rep.Tries {
		if t.Fate == Won {
			return t, true
		}
	}
	return Try{}, false
}
