package gateway

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/router"
)

// sweeping starts the gateway's session sweeper (its challenge schedule)
// on the bubble's clock, stopped with the test.
func sweeping(t *testing.T, sm *sessionMarket) {
	t.Helper()
	sw := NewSessionSweeper(sm.gw, clock.New())
	if err := sw.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sw.Stop(context.Background()) })
}

// forget makes successor p hold nothing of session id (restarted without
// its state); lie makes it answer turn n instead.
func (n *successorNet) forget(p peer.ID, id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.holds[p], id)
}

func (n *successorNet) askedOf(p peer.ID) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, a := range n.asked {
		if a == p {
			c++
		}
	}
	return c
}

// pass lets d go by a second at a time, the providers listed heartbeating.
func (sm *sessionMarket) pass(d time.Duration, idx ...int) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		time.Sleep(time.Second)
		sm.beatOnly(idx...)
	}
}

// untilStopped lets time pass, a second at a time with the providers
// listed heartbeating, until a stream is stopped (at most max), and says
// how long that took.
func (sm *sessionMarket) untilStopped(t *testing.T, max time.Duration, idx ...int) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < max {
		sm.pass(time.Second, idx...)
		synctest.Wait()
		if _, stopped := sm.chain.streams(); len(stopped) > 0 {
			return time.Since(start)
		}
	}
	t.Fatalf("no stream stopped within %s", max)
	return 0
}

// replaced asserts that session id's successor p1 was dropped between
// turns, its stream (the first opened) stopped, and p2 engaged in its
// place for primary p0 with a stream of its own, still running.
func replaced(t *testing.T, sm *sessionMarket, id string, p0, p2 peer.ID) {
	t.Helper()
	v, _ := sm.gw.Session(id)
	if v.Successor == nil || v.Successor.Peer != p2.String() || v.InTurn {
		t.Fatalf("after the failed challenge: %+v", v)
	}
	opened, stopped := sm.chain.streams()
	if len(opened) != 2 || !stopped[opened[0].id] || stopped[opened[1].id] || opened[1].payee != sm.provs[2].ident.MachineID() {
		t.Fatalf("streams %+v stopped %v: the failed successor's stops, its replacement's runs", opened, stopped)
	}
	as := sm.net.assignments()
	if last := as[len(as)-1]; last.to != p2 || last.a.PrimaryPeer != p0 || last.a.SessionID != id {
		t.Fatalf("replacement's assignment %+v", last)
	}
	if got := count(sm.gw.sessionMetrics.streamsStopped.WithLabelValues("challenge_failed")); got != 1 {
		t.Fatalf("streams stopped for a failed challenge: %v", got)
	}
}

// TestScheduledChallengeReplacesSuccessor: between turns, every
// challenge_interval, each successor proves the turn it holds; one that
// restarted without the state, or answers a stale turn, is replaced at
// once (its stream stopped, another engaged), and the primary's next turn
// seals to the replacement. A successor that proves its turn keeps its
// stream.
func TestScheduledChallengeReplacesSuccessor(t *testing.T) {
	for name, fault := range map[string]func(n *successorNet, p peer.ID, id string){
		"restarted without state": func(n *successorNet, p peer.ID, id string) { n.forget(p, id) },
		"stale turn": func(n *successorNet, p peer.ID, _ string) {
			n.mu.Lock()
			n.lie[p] = 1 // its primary sealed turn 2
			n.mu.Unlock()
		},
	} {
		t.Run(name, func(t *testing.T) {
			inBubble(t, func(t *testing.T, st *bubbleLedger) {
				sm := newStandbyMarket(t, st, answer(ms, "ok"))
				p0, p1, p2 := sm.provs[0].id, sm.provs[1].id, sm.provs[2].id
				s := &SessionRequest{Continuity: ContinuityOn}
				s.ID = sm.mustTurn(t, s).ID
				sm.mustTurn(t, s) // turn 2: p1 passes its challenge for turn 1
				synctest.Wait()
				sweeping(t, sm)
				every := sm.gw.cfg.Sessions.ChallengeInterval
				// One interval with a warm successor: it proves turn 2 and keeps its stream.
				sm.pass(every, 0, 1, 2)
				synctest.Wait()
				if got := sm.net.askedOf(p1); got != 2 {
					t.Fatalf("p1 challenged %d times after one interval, want 2 (turn 2's and the schedule's)", got)
				}
				if _, stopped := sm.chain.streams(); len(stopped) != 0 {
					t.Fatalf("a warm successor's stream was stopped: %v", stopped)
				}
				fault(sm.net, p1, s.ID)
				if took := sm.untilStopped(t, 2*every, 0, 1, 2); took > every+challengeRetry+time.Second {
					t.Fatalf("stream stopped after %s, want within one interval and a retry", took)
				}
				replaced(t, sm, s.ID, p0, p2)
				// The next turn names the replacement to its primary.
				info := sm.mustTurn(t, s)
				c := sm.lastCall(t)
				if c.peer != p0 || peer.ID(c.req.Session.SuccessorPeer) != p2 || info.Successor.Peer != p2.String() || info.ServedBy != ServedByPrimary {
					t.Fatalf("turn after the replacement: call to %s %+v, %+v", c.peer, c.req.Session, info)
				}
			})
		})
	}
}

// TestLapsedSuccessorChallengedAtOnce: a successor whose heartbeats lapse
// is challenged at once, not at the next interval; dead, it is replaced
// and its stream stopped well within the interval.
func TestLapsedSuccessorChallengedAtOnce(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		p0, p1, p2 := sm.provs[0].id, sm.provs[1].id, sm.provs[2].id
		s := &SessionRequest{Continuity: ContinuityOn}
		s.ID = sm.mustTurn(t, s).ID
		synctest.Wait()
		sweeping(t, sm)
		sm.net.forget(p1, s.ID) // killed: it answers nothing of the session
		took := sm.untilStopped(t, sm.gw.cfg.Sessions.ChallengeInterval, 0, 2)
		if bound := router.DownAfter + lapseCheckEvery + 2*time.Second; took > bound {
			t.Fatalf("stream stopped after %s, want within %s: the lapse did not trigger the challenge", took, bound)
		}
		if sm.table.Status(p1) == router.StatusUp {
			t.Fatal("p1 still up")
		}
		replaced(t, sm, s.ID, p0, p2)
		if got := count(sm.gw.sessionMetrics.challenges.WithLabelValues("failed")); got != 1 {
			t.Fatalf("failed challenges %v", got)
		}
	})
}

// TestCheckSkipsSessionsInTurn: a session with a turn in flight is left
// to the turn's own challenge, and a successor the table has not heard
// of yet (a restarted gateway) is not taken as lapsed.
func TestCheckSkipsSessionsInTurn(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		s := &SessionRequest{Continuity: ContinuityOn}
		s.ID = sm.mustTurn(t, s).ID
		sm.gw.sessions.mu.Lock()
		e := sm.gw.sessions.m[s.ID]
		e.busy = true
		sm.gw.sessions.mu.Unlock()
		if n := sm.gw.CheckSuccessors(true, nil); n != 0 {
			t.Fatalf("%d challenges of a session in a turn", n)
		}
		sm.gw.sessions.mu.Lock()
		e.busy = false
		unknown := *e.successor
		unknown.peer = peer.ID("unheard")
		e.successor = &unknown
		sm.gw.sessions.mu.Unlock()
		if n := sm.gw.CheckSuccessors(false, nil); n != 0 {
			t.Fatalf("%d challenges of a successor the table never heard", n)
		}
	})
}

// TestLapsedButAnswering: a successor whose heartbeats lapsed but which
// still proves its turn keeps the session and its stream, and is asked
// again only after lapseRecheck, not every second.
func TestLapsedButAnswering(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		p1 := sm.provs[1].id
		s := &SessionRequest{Continuity: ContinuityOn}
		s.ID = sm.mustTurn(t, s).ID
		synctest.Wait()
		sweeping(t, sm)
		for sm.table.Status(p1) == router.StatusUp {
			sm.pass(time.Second, 0, 2)
		}
		sm.pass(lapseRecheck/2, 0, 2)
		synctest.Wait()
		if got := sm.net.askedOf(p1); got != 1 {
			t.Fatalf("a lapsed successor asked %d times within %s, want 1", got, lapseRecheck/2)
		}
		sm.pass(lapseRecheck, 0, 2)
		synctest.Wait()
		if got := sm.net.askedOf(p1); got != 2 {
			t.Fatalf("a lapsed successor asked %d times after %s more, want 2", got, lapseRecheck)
		}
		v, _ := sm.gw.Session(s.ID)
		if _, stopped := sm.chain.streams(); len(stopped) != 0 || v.Successor == nil || v.Successor.Peer != p1.String() {
			t.Fatalf("an answering successor lost the session: %+v, stopped %v", v, stopped)
		}
	})
}
