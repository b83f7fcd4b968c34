package gateway

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/router"
)

// TestFailoverToSuccessor: the primary goes down between turns; the turn
// goes to the successor with Failover, which becomes primary (served_by
// successor), a fresh successor is assigned to it, the old standby stream
// is stopped and the next turn is pinned to the new primary.
func TestFailoverToSuccessor(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		s := &SessionRequest{Continuity: ContinuityOn}
		first := sm.mustTurn(t, s)
		p0, p1, p2 := sm.provs[0].id, sm.provs[1].id, sm.provs[2].id
		if first.Primary.Peer != p0.String() || first.Successor == nil || first.Successor.Peer != p1.String() {
			t.Fatalf("first turn %+v", first)
		}
		s.ID = first.ID
		time.Sleep(router.DownAfter + time.Second)
		sm.beatOnly(1, 2) // p0 is silent: down
		if sm.table.Status(p0) == router.StatusUp {
			t.Fatal("p0 still up")
		}
		info := sm.mustTurn(t, s)
		c := sm.lastCall(t)
		if c.peer != p1 || !c.req.Session.Failover || c.req.Session.Turn != 2 || peer.ID(c.req.Session.SuccessorPeer) != p2 {
			t.Fatalf("failover call to %s, session %+v", c.peer, c.req.Session)
		}
		if info.ServedBy != ServedBySuccessor || info.Primary.Peer != p1.String() || info.Successor == nil || info.Successor.Peer != p2.String() {
			t.Fatalf("failed-over turn %+v", info)
		}
		as := sm.net.assignments()
		if last := as[len(as)-1]; last.to != p2 || last.a.PrimaryPeer != p1 {
			t.Fatalf("reassignment %+v", last)
		}
		synctest.Wait()
		opened, stopped := sm.chain.streams()
		if len(opened) != 2 || !stopped[opened[0].id] || stopped[opened[1].id] {
			t.Fatalf("streams %+v, stopped %v: the promoted successor's stream stops, the new one runs", opened, stopped)
		}
		info = sm.mustTurn(t, s)
		c = sm.lastCall(t)
		if c.peer != p1 || c.req.Session.Failover || info.ServedBy != ServedByPrimary || info.Turn != 3 {
			t.Fatalf("turn after the failover: call to %s %+v, %+v", c.peer, c.req.Session, info)
		}
		if got := count(sm.gw.sessionMetrics.failovers); got != 1 {
			t.Fatalf("failovers %v", got)
		}
		if s := sm.gw.Snapshot().Sessions; s == nil || s.Active != 1 || s.Failovers != 1 || s.SuccessorsAssigned != 2 ||
			s.StreamsOpened != 2 || s.StreamsStopped["promoted"] != 1 || s.Challenges["passed"] != 2 {
			t.Fatalf("router metrics' sessions %+v", s)
		}
		v, ok := sm.gw.Session(s.ID)
		if !ok || v.Turn != 3 || v.Failovers != 1 || v.Primary.Peer != p1.String() || v.Successor.Peer != p2.String() || v.Successor.StreamID != opened[1].id {
			t.Fatalf("session view %+v", v)
		}
	})
}

// TestTurnFailsAtPrimary: a turn the primary fails (it is still up) goes
// to the successor with Failover.
func TestTurnFailsAtPrimary(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		flaky := func(n int, _ *infer.Request) script {
			if n == 1 {
				return script{first: ms, fail: &infer.ErrorFrame{Status: 503, Code: "engine"}}
			}
			return script{first: ms, tokens: []string{"ok"}}
		}
		sm := newStandbyMarket(t, st, flaky, answer(ms, "ok"))
		s := &SessionRequest{Continuity: ContinuityOn}
		s.ID = sm.mustTurn(t, s).ID
		info := sm.mustTurn(t, s)
		cs := sm.calls()
		if len(cs) != 3 || cs[1].peer != sm.provs[0].id || cs[2].peer != sm.provs[1].id || !cs[2].req.Session.Failover {
			t.Fatalf("calls %v", peersOf(cs))
		}
		if info.ServedBy != ServedBySuccessor || info.Successor == nil || info.Successor.Peer != sm.provs[2].id.String() {
			t.Fatalf("turn %+v", info)
		}
	})
}

// TestChallengeDropsStaleSuccessor: a successor that does not hold the
// turn its primary last sealed loses the session after one retry: its
// stream is stopped and the next turn assigns another.
func TestChallengeDropsStaleSuccessor(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		s := &SessionRequest{Continuity: ContinuityOn}
		s.ID = sm.mustTurn(t, s).ID
		p1, p2 := sm.provs[1].id, sm.provs[2].id
		// Turn 2 challenges p1 for turn 1, which it holds.
		if info := sm.mustTurn(t, s); info.Successor.Peer != p1.String() {
			t.Fatalf("turn 2 %+v", info)
		}
		synctest.Wait()
		if got := count(sm.gw.sessionMetrics.challenges.WithLabelValues("passed")); got != 1 {
			t.Fatalf("challenges passed %v", got)
		}
		sm.net.mu.Lock()
		sm.net.lie[p1] = 1 // it claims turn 1; the primary sealed turn 2
		sm.net.mu.Unlock()
		sm.mustTurn(t, s) // turn 3 challenges p1 for turn 2
		time.Sleep(challengeRetry + time.Second)
		synctest.Wait()
		v, _ := sm.gw.Session(s.ID)
		if v.Successor != nil || v.SuccessorReason != ReasonChallengeFailed {
			t.Fatalf("after a failed challenge %+v", v)
		}
		opened, stopped := sm.chain.streams()
		if !stopped[opened[0].id] {
			t.Fatal("the failed successor's stream is not stopped")
		}
		sm.beatOnly(0, 1, 2)
		info := sm.mustTurn(t, s)
		if info.Successor == nil || info.Successor.Peer != p2.String() {
			t.Fatalf("turn 4 did not assign a new successor: %+v", info)
		}
	})
}

// TestSessionContinuedTurn: a turn whose primary breaks mid-stream is
// finished by stream continuation, as any request, and says so (served_by
// continued, the primary still holding the session); the primary sealed
// nothing of it, so its successor is still held to the turn before (and
// passes its challenge).
func TestSessionContinuedTurn(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		breaks := func(n int, _ *infer.Request) script {
			switch n {
			case 1:
				return script{first: ms, gap: ms, tokens: []string{"a", "b", "c"}, cutAt: 1}
			case 2: // slower than the challenge's retry: it sees only what turn 1 left
				return script{first: challengeRetry + time.Second, tokens: []string{"a"}}
			}
			return script{first: ms, gap: ms, tokens: []string{"a", "b", "c"}}
		}
		sm := newStandbyMarket(t, st, breaks, answer(ms, "b", "c"))
		s := &SessionRequest{Continuity: ContinuityOn}
		s.ID = sm.mustTurn(t, s).ID
		res, err := sm.turn(t, s)
		if err != nil || !res.Continued || res.Session.ServedBy != ServedByContinued || res.Session.Primary.Peer != sm.provs[0].id.String() {
			t.Fatalf("continued turn: %+v %v", res, err)
		}
		info := sm.mustTurn(t, s)
		synctest.Wait()
		if info.Successor == nil || info.Successor.Peer != sm.provs[1].id.String() ||
			count(sm.gw.sessionMetrics.challenges.WithLabelValues("passed")) != 2 || count(sm.gw.sessionMetrics.challenges.WithLabelValues("failed")) != 0 {
			t.Fatalf("after a continued turn: %+v, challenges %v", info, sm.gw.Snapshot().Sessions.Challenges)
		}
	})
}

// TestSuccessorDownIsReplaced: a successor that goes down between turns
// is replaced at the next turn (its stream stopped), not discovered dead
// at the failover.
func TestSuccessorDownIsReplaced(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		s := &SessionRequest{Continuity: ContinuityOn}
		first := sm.mustTurn(t, s)
		s.ID = first.ID
		if first.Successor == nil || first.Successor.Peer != sm.provs[1].id.String() {
			t.Fatalf("first turn %+v", first)
		}
		time.Sleep(router.DownAfter + time.Second)
		sm.beatOnly(0, 2) // the successor is silent
		info := sm.mustTurn(t, s)
		if info.ServedBy != ServedByPrimary || info.Successor == nil || info.Successor.Peer != sm.provs[2].id.String() {
			t.Fatalf("turn 2 %+v: want p2 to replace the down successor", info)
		}
		synctest.Wait()
		opened, stopped := sm.chain.streams()
		if len(opened) != 2 || !stopped[opened[0].id] || stopped[opened[1].id] {
			t.Fatalf("streams %+v stopped %v", opened, stopped)
		}
		if got := count(sm.gw.sessionMetrics.streamsStopped.WithLabelValues("replaced")); got != 1 {
			t.Fatalf("streams stopped (replaced) %v", got)
		}
	})
}
