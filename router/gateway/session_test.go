package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/router/routertest"
)

// TestSessionPinsPrimary: every turn goes to the session's primary while
// it is up, even once another provider is cheaper, and carries the
// session's ID and turn number; without continuity nobody is assigned.
func TestSessionPinsPrimary(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 3, false, answer(ms, "ok"))
		first := sm.mustTurn(t, &SessionRequest{})
		p0 := sm.provs[0].id
		if first.ID == "" || CheckSessionID(first.ID) != nil || first.Turn != 1 || first.Primary.Peer != p0.String() ||
			first.ServedBy != ServedByPrimary || first.Successor != nil || first.SuccessorReason != ReasonContinuityOff {
			t.Fatalf("first turn %+v", first)
		}
		sm.standby(0, "DE", -1, 1000) // p0 is now by far the dearest
		sm.beatOnly(0, 1, 2)
		for turn := uint32(2); turn <= 3; turn++ {
			info := sm.mustTurn(t, &SessionRequest{ID: first.ID})
			c := sm.lastCall(t)
			if c.peer != p0 || info.Primary.Peer != p0.String() || info.Turn != turn || info.ServedBy != ServedByPrimary {
				t.Fatalf("turn %d went to %s: %+v", turn, c.peer, info)
			}
			if c.req.Session == nil || c.req.Session.ID != first.ID || c.req.Session.Turn != turn || c.req.Session.Failover {
				t.Fatalf("turn %d sent session %+v", turn, c.req.Session)
			}
		}
		if len(sm.calls()) != 3 {
			t.Fatalf("%d calls for 3 turns: a session turn must not be hedged", len(sm.calls()))
		}
		if n := len(sm.net.assignments()); n != 0 {
			t.Fatalf("%d assignments without continuity", n)
		}
		// The request without a session is routed afresh: the cheapest.
		if res := mustRoute(t, sm.market, request()); res.Provider.PeerID == p0.String() {
			t.Fatal("a request outside the session went to the pinned, dearest provider")
		}
	})
}

// TestSuccessorSelection: the successor serves the same model, meets the
// jurisdiction, is never the primary's own operator, is registered, offers
// standby, and is the cheapest standby among those; it is assigned (told
// the primary), funded by a stream at its fee for the horizon, and named
// in the primary's request.
func TestSuccessorSelection(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 6, true, answer(ms, "ok"))
		sm.standby(0, "DE", 1, 10)  // the primary (cheapest to serve)
		sm.standby(1, "DE", 1, 100) // cheapest standby, but the primary's operator
		sm.standby(2, "US", 2, 100) // outside Europe
		sm.standby(3, "FR", 9, 100) // eligible, dearer
		sm.standby(4, "DE", 7, 100) // eligible, the cheapest so
		sm.standby(5, "DE", 3, 100) // unregistered
		sm.chain.operators[sm.provs[1].id] = "op-0"
		delete(sm.chain.operators, sm.provs[5].id)
		sm.beatOnly(0, 1, 2, 3, 4, 5)
		info := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn, Jurisdiction: "Europe"})
		p0, p4 := sm.provs[0].id, sm.provs[4].id
		if info.Primary.Peer != p0.String() || info.Successor == nil || info.Successor.Peer != p4.String() {
			t.Fatalf("session %+v: want primary %s, successor %s", info, p0, p4)
		}
		as := sm.net.assignments()
		if len(as) != 1 || as[0].to != p4 || as[0].a.PrimaryPeer != p0 || as[0].a.SessionID != info.ID ||
			string(as[0].a.ModelID) != string(modelID) || len(as[0].a.StreamID) != 32 {
			t.Fatalf("assignments %+v", as)
		}
		m4 := sm.provs[4].ident.MachineID()
		opened, _ := sm.chain.streams()
		if len(opened) != 1 || opened[0].payee != m4 || opened[0].rate != 7 || opened[0].deposit != 7 || opened[0].payer != "alice" {
			t.Fatalf("streams %+v: want one to %s at 7/h, deposit 7 (one hour)", opened, m4)
		}
		turn := sm.lastCall(t).req.Session
		if turn == nil || peer.ID(turn.SuccessorPeer) != p4 || string(turn.SuccessorMachine) != string(m4[:]) || len(turn.SuccessorKey) != infer.SessionKeySize {
			t.Fatalf("primary's request names successor %+v", turn)
		}
		// A country pin excludes a provider that announces only its continent.
		if !inRegion("Europe", "DE") || inRegion("DE", "Europe") || inRegion("Europe", "US") || !inRegion("FR", "FR") {
			t.Fatal("jurisdiction matching")
		}
		if got := count(sm.gw.sessionMetrics.assigned); got != 1 {
			t.Fatalf("successors assigned %v", got)
		}
	})
}

// TestSuccessorOffChainIsAnotherMachine: without a chain there are no
// operators; another machine is the rule.
func TestSuccessorOffChainIsAnotherMachine(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 2, false, answer(ms, "ok"))
		sm.standby(0, "DE", 5, 10)
		sm.standby(1, "DE", 5, 20)
		sm.beatOnly(0, 1)
		info := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
		if info.Successor == nil || info.Successor.Peer != sm.provs[1].id.String() {
			t.Fatalf("session %+v", info)
		}
	})
}

// TestNoSuccessor: with continuity the session proceeds and says why;
// required refuses (409 no_successor) before any provider is called and
// keeps no session.
func TestNoSuccessor(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 2, true, answer(ms, "ok"))
		sm.standby(1, "DE", 4, 20)
		sm.chain.operators[sm.provs[1].id] = "op-0" // the only standby is the primary's operator
		sm.beatOnly(0, 1)
		info := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
		if info.Successor != nil || info.SuccessorReason != ReasonSameOperator {
			t.Fatalf("session %+v: want no successor for same_operator", info)
		}
		before := len(sm.calls())
		_, err := sm.turn(t, &SessionRequest{Continuity: ContinuityRequired})
		var ge *Error
		if !errors.As(err, &ge) || ge.Status != http.StatusConflict || ge.Code != "no_successor" {
			t.Fatalf("required without a successor: %v", err)
		}
		if len(sm.calls()) != before {
			t.Fatal("a refused turn reached a provider")
		}
		if n := sm.gw.sessions.len(); n != 1 {
			t.Fatalf("%d sessions kept, want only the first", n)
		}
		if got := count(sm.gw.sessionMetrics.noSuccessor.WithLabelValues(ReasonSameOperator)); got != 2 {
			t.Fatalf("no-successor same_operator counted %v", got)
		}
		sm.chain.unfunded = true
		sm.chain.operators[sm.provs[1].id] = "op-1"
		info = sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
		if info.Successor != nil || info.SuccessorReason != ReasonUnfunded || len(sm.net.assignments()) != 0 {
			t.Fatalf("unfunded standby: %+v, %d assignments", info, len(sm.net.assignments()))
		}
	})
}

// TestSessionIdleExpires: an idle session ends and its stream stops.
func TestSessionIdleExpires(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 2, true, answer(ms, "ok"))
		sm.standby(0, "DE", 1, 10)
		sm.standby(1, "DE", 1, 20)
		sm.beatOnly(0, 1)
		id := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn}).ID
		if n := sm.gw.SweepSessions(); n != 0 {
			t.Fatalf("swept %d live sessions", n)
		}
		time.Sleep(testConfig().Sessions.IdleTimeout)
		if n := sm.gw.SweepSessions(); n != 1 {
			t.Fatalf("swept %d, want the idle session", n)
		}
		synctest.Wait()
		if _, ok := sm.gw.Session(id); ok {
			t.Fatal("idle session kept")
		}
		opened, stopped := sm.chain.streams()
		if len(opened) != 1 || !stopped[opened[0].id] {
			t.Fatalf("streams %+v stopped %v", opened, stopped)
		}
		if got := count(sm.gw.sessionMetrics.streamsStopped.WithLabelValues("idle")); got != 1 {
			t.Fatalf("streams stopped (idle) %v", got)
		}
		// A stopping gateway ends the sessions it holds and their streams.
		sm.beatOnly(0, 1)
		id = sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn}).ID
		if n := sm.gw.EndSessions(context.Background()); n != 1 {
			t.Fatalf("EndSessions stopped %d streams", n)
		}
		opened, stopped = sm.chain.streams()
		if _, ok := sm.gw.Session(id); ok || len(opened) != 2 || !stopped[opened[1].id] {
			t.Fatalf("after EndSessions: streams %+v stopped %v", opened, stopped)
		}
	})
}

// TestSessionRefusals: a session is its buyer's and its model's; bad
// options are 400s naming the field.
func TestSessionRefusals(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 2, false, answer(ms, "ok"))
		id := sm.mustTurn(t, &SessionRequest{ID: "my-session_1"}).ID
		if id != "my-session_1" {
			t.Fatalf("the buyer's id became %q", id)
		}
		req := request()
		req.Payer, req.Session = "bob", &SessionRequest{ID: id}
		_, _, err := route(t, sm.market, req)
		var ge *Error
		if !errors.As(err, &ge) || ge.Status != http.StatusConflict || ge.Code != "session_conflict" {
			t.Fatalf("another buyer's turn: %v", err)
		}
		for _, c := range []struct {
			s     SessionRequest
			param string
		}{
			{SessionRequest{ID: "has space"}, "tenzro.session.id"},
			{SessionRequest{ID: string(make([]byte, 65))}, "tenzro.session.id"},
			{SessionRequest{Jurisdiction: "DE-BY"}, "tenzro.session.jurisdiction"},
			{SessionRequest{Jurisdiction: "Atlantis"}, "tenzro.session.jurisdiction"},
			{SessionRequest{Continuity: 7}, "tenzro.session.continuity"},
		} {
			_, err := sm.turn(t, &c.s)
			if !errors.As(err, &ge) || ge.Status != http.StatusBadRequest || ge.Param != c.param {
				t.Fatalf("%+v: %v, want 400 on %s", c.s, err, c.param)
			}
		}
	})
}

func count(c prometheus.Counter) uint64 { return (&dtoMetric{}).read(c) }

// TestSuccessorTieOnFeeGoesToStanding: equal standby fees are decided by
// standing.
func TestSuccessorTieOnFeeGoesToStanding(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 3, true, answer(ms, "ok"))
		reg := routertest.NewRegistry()
		for i, fp := range sm.provs {
			m := fp.ident.MachineID()
			reg.Machines[fp.id], reg.Standing[m] = m, uint32(1000*(i+1))
			sm.standby(i, "DE", 5, uint64(10+i))
		}
		sm.table.SetRegistry(reg)
		sm.beatOnly(0, 1, 2)
		for _, best := range []int{2, 1} {
			reg.Standing[sm.provs[best].ident.MachineID()] = 9000
			reg.Standing[sm.provs[3-best].ident.MachineID()] = 1000
			info := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
			if info.Primary.Peer != sm.provs[0].id.String() || info.Successor == nil || info.Successor.Peer != sm.provs[best].id.String() {
				t.Fatalf("session %+v: at equal fees the higher standing (p%d) stands by", info, best)
			}
		}
	})
}

// TestSessionLimits: one buyer cannot hold more than its share of the
// table, nor the table more than its bound; sessions a refused or failed
// turn made are not kept.
func TestSessionLimits(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 1, false, answer(ms, "ok"))
		cfg := testConfig()
		cfg.Sessions.MaxSessions, cfg.Sessions.MaxPerBuyer = 3, 2
		gw, err := New(cfg, Deps{Transport: sm.tr, Table: sm.table, Ledger: st})
		if err != nil {
			t.Fatal(err)
		}
		sm.gw = gw
		for range 2 {
			sm.mustTurn(t, &SessionRequest{})
		}
		var ge *Error
		if _, err := sm.turn(t, &SessionRequest{}); !errors.As(err, &ge) || ge.Status != http.StatusTooManyRequests || ge.Code != "too_many_sessions" {
			t.Fatalf("alice's third session: %v", err)
		}
		bob := func() error {
			req := request()
			req.Payer, req.Session = "bob", &SessionRequest{}
			_, _, err := route(t, sm.market, req)
			return err
		}
		if err := bob(); err != nil {
			t.Fatal(err)
		}
		if err := bob(); !errors.As(err, &ge) || ge.Status != http.StatusServiceUnavailable || ge.Code != "sessions_full" {
			t.Fatalf("a fourth session in a table of 3: %v", err)
		}
		if n := gw.sessions.len(); n != 3 {
			t.Fatalf("%d sessions held", n)
		}
		bad := DefaultConfig()
		bad.Sessions.MaxPerBuyer = bad.Sessions.MaxSessions + 1
		if err := bad.Validate("router."); err == nil || !strings.Contains(err.Error(), "router.sessions.max_per_buyer") {
			t.Fatalf("max_per_buyer over max_sessions: %v", err)
		}
	})
}

// TestAssignWaitsForTheSuccessorsChain: a successor that refuses a
// freshly funded assignment (its copy of the chain has not the stream
// yet) is asked again, and takes it once it has; one that keeps refusing
// is given up within assignSyncWait for the next candidate, its stream
// stopped.
func TestAssignWaitsForTheSuccessorsChain(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		p1 := sm.provs[1].id
		sm.net.mu.Lock()
		sm.net.refuse[p1] = true
		sm.net.mu.Unlock()
		go func() {
			time.Sleep(assignRetry + assignRetry/2) // the successor's chain catches up after two refusals
			sm.net.mu.Lock()
			delete(sm.net.refuse, p1)
			sm.net.mu.Unlock()
		}()
		info := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
		if info.Successor == nil || info.Successor.Peer != p1.String() {
			t.Fatalf("session %+v: want p1 once its chain caught up", info)
		}
		sm.net.mu.Lock()
		sm.net.refuse[p1] = true
		sm.net.mu.Unlock()
		start := time.Now()
		info = sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
		if took := time.Since(start); info.Successor == nil || info.Successor.Peer != sm.provs[2].id.String() || took > assignSyncWait+time.Second {
			t.Fatalf("session %+v after %v: want p2 after giving up on p1", info, took)
		}
		synctest.Wait()
		opened, stopped := sm.chain.streams()
		if len(opened) != 3 || stopped[opened[0].id] || !stopped[opened[1].id] || stopped[opened[2].id] {
			t.Fatalf("streams %+v stopped %v: the refused successor's stream stops", opened, stopped)
		}
	})
}

// TestAssignWaitsWhileTheSuccessorIsBehind: a successor that answers
// that its chain is behind the stream's block is asked again past
// assignSyncWait, for as long as the assignment's bound allows, and is
// assigned once it catches up; no other successor is funded meanwhile.
func TestAssignWaitsWhileTheSuccessorIsBehind(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		p1 := sm.provs[1].id
		sm.net.mu.Lock()
		sm.net.behind[p1] = true
		sm.net.mu.Unlock()
		go func() {
			time.Sleep(3 * assignSyncWait) // a follower lagging well past the old fixed wait
			sm.net.mu.Lock()
			delete(sm.net.behind, p1)
			sm.net.mu.Unlock()
		}()
		info := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
		if info.Successor == nil || info.Successor.Peer != p1.String() {
			t.Fatalf("session %+v: want p1 once its chain caught up", info)
		}
		synctest.Wait()
		if opened, stopped := sm.chain.streams(); len(opened) != 1 || stopped[opened[0].id] {
			t.Fatalf("streams %+v stopped %v: one stream, to the successor that waited", opened, stopped)
		}
	})
}
