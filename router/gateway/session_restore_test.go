package gateway

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/sessioncache"
)

// storeAt gives the market's gateway a session store in dir.
func (sm *sessionMarket) storeAt(t *testing.T, dir string) SessionStore {
	t.Helper()
	s, err := sessioncache.OpenDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	sm.gw.store = s
	return s
}

// storedSession is a standby market whose gateway stores its table, with
// one session's first turn served.
func storedSession(t *testing.T, st *bubbleLedger) (*sessionMarket, SessionStore, *SessionRequest) {
	t.Helper()
	sm := newStandbyMarket(t, st, answer(ms, "ok"))
	store := sm.storeAt(t, t.TempDir())
	s := &SessionRequest{Continuity: ContinuityOn}
	s.ID = sm.mustTurn(t, s).ID
	return sm, store, s
}

// restart replaces the market's gateway by a new one over the same
// providers, chain and store, as a restarted process would be, and
// restores its table.
func (sm *sessionMarket) restart(t *testing.T, st *bubbleLedger, store SessionStore) (restored, ended int) {
	t.Helper()
	d := Deps{Transport: sm.tr, Table: sm.table, Ledger: st, Successors: sm.net, SessionStore: store}
	if sm.chain != nil {
		d.Operators, d.Streams = sm.chain, sm.chain
	}
	gw, err := New(testConfig(), d)
	if err != nil {
		t.Fatal(err)
	}
	sm.gw = gw
	restored, ended, err = gw.RestoreSessions()
	if err != nil {
		t.Fatal(err)
	}
	return restored, ended
}

// TestSessionsSurviveGatewayRestart: a gateway killed between turns and
// started again continues each session (same primary, successor and
// standby stream, the next turn number); no stream is opened anew or
// left running unowned.
func TestSessionsSurviveGatewayRestart(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		store := sm.storeAt(t, t.TempDir())
		p0, p1 := sm.provs[0].id, sm.provs[1].id
		s := &SessionRequest{Continuity: ContinuityOn, Jurisdiction: "Europe"}
		s.ID = sm.mustTurn(t, s).ID
		sm.mustTurn(t, s)
		synctest.Wait()
		before, _ := sm.gw.Session(s.ID)
		if r, e := sm.restart(t, st, store); r != 1 || e != 0 {
			t.Fatalf("restored %d, ended %d; want 1, 0", r, e)
		}
		after, ok := sm.gw.Session(s.ID)
		if !ok || after.Turn != 2 || after.Payer != "alice" || after.Model != before.Model || after.Jurisdiction != "Europe" ||
			after.Primary.Peer != p0.String() || after.Successor == nil || after.Successor.Peer != p1.String() ||
			after.Successor.StreamID != before.Successor.StreamID || after.CreatedMs != before.CreatedMs {
			t.Fatalf("restored session %+v, before %+v", after, before)
		}
		// The successor still holds turn 2: the restarted gateway's
		// challenge passes and the stream runs.
		if n := sm.gw.CheckSuccessors(true, nil); n != 1 {
			t.Fatalf("%d challenges after the restart", n)
		}
		synctest.Wait()
		info := sm.mustTurn(t, s)
		c := sm.lastCall(t)
		if info.Turn != 3 || info.ServedBy != ServedByPrimary || c.peer != p0 || c.req.Session.Turn != 3 || peer.ID(c.req.Session.SuccessorPeer) != p1 {
			t.Fatalf("turn after the restart: %+v, call to %s %+v", info, c.peer, c.req.Session)
		}
		synctest.Wait()
		opened, stopped := sm.chain.streams()
		if len(opened) != 1 || len(stopped) != 0 || count(sm.gw.sessionMetrics.challenges.WithLabelValues("passed")) != 2 {
			t.Fatalf("streams %+v stopped %v, challenges %v: the session's stream continues", opened, stopped, sm.gw.Snapshot().Sessions.Challenges)
		}
		// Ending the session ends its record too.
		if _, err := sm.gw.EndSession(t.Context(), s.ID, "alice"); err != nil {
			t.Fatal(err)
		}
		if r, e := sm.restart(t, st, store); r != 0 || e != 0 {
			t.Fatalf("after the end, restored %d, ended %d", r, e)
		}
	})
}

// TestRestoreStopsWhatCannotContinue: a stored session that idled out
// while the gateway was down, or whose record is unreadable, is not taken
// back; an idled one's stream is stopped at once and its record deleted.
func TestRestoreStopsWhatCannotContinue(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm, store, s := storedSession(t, st)
		if err := store.Put("garbled", []byte{0xa1, 0x01}); err != nil {
			t.Fatal(err)
		}
		recs, _ := store.All()
		forged := bytes.Clone(recs[s.ID])
		if err := store.Put("forged", forged); err != nil { // a record stored under another session's ID
			t.Fatal(err)
		}
		time.Sleep(sm.gw.cfg.Sessions.IdleTimeout)
		sm.beatOnly(0, 1, 2)
		if r, e := sm.restart(t, st, store); r != 0 || e != 3 {
			t.Fatalf("restored %d, ended %d; want 0, 3", r, e)
		}
		synctest.Wait()
		opened, stopped := sm.chain.streams()
		if len(opened) != 1 || !stopped[opened[0].id] || count(sm.gw.sessionMetrics.streamsStopped.WithLabelValues(restoreIdle)) != 1 {
			t.Fatalf("streams %+v stopped %v: the idle session's stream is stopped at restore", opened, stopped)
		}
		if recs, err := store.All(); err != nil || len(recs) != 0 {
			t.Fatalf("records left %d %v", len(recs), err)
		}
		if _, ok := sm.gw.Session(s.ID); ok {
			t.Fatal("an idled-out session was restored")
		}
	})
}

// TestPersistentGatewayStopKeepsSessions: a gateway with a store stops
// without ending its sessions (the restart continues them); one without
// ends them and stops their streams, as before.
func TestPersistentGatewayStopKeepsSessions(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm, store, s := storedSession(t, st)
		sw := NewSessionSweeper(sm.gw, sm.gw.clock)
		if err := sw.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := sw.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, stopped := sm.chain.streams(); len(stopped) != 0 {
			t.Fatalf("a persistent gateway's stop stopped streams %v", stopped)
		}
		if r, _ := sm.restart(t, st, store); r != 1 {
			t.Fatalf("restored %d", r)
		}
		if _, ok := sm.gw.Session(s.ID); !ok {
			t.Fatalf("session %s not restored", s.ID)
		}
		// Without a store the same stop ends the session and its stream.
		sm.gw.store = nil
		sw = NewSessionSweeper(sm.gw, sm.gw.clock)
		if err := sw.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := sw.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		opened, stopped := sm.chain.streams()
		if len(opened) != 1 || !stopped[opened[0].id] {
			t.Fatalf("an in-memory gateway's stop left streams %+v stopped %v", opened, stopped)
		}
	})
}

// FuzzDecodeSession: a stored session record decodes strictly or not at
// all, and what decodes encodes back to a record that decodes the same.
func FuzzDecodeSession(f *testing.F) {
	e := &sessionEntry{id: "s-1", payer: "alice", model: bytes.Repeat([]byte{1}, 32), turn: 3, sealed: 2,
		primary: &member{peer: peer.ID("\x00\x04abcd"), operator: "op-0"}, successor: &member{peer: peer.ID("\x00\x04efgh"), stream: string(bytes.Repeat([]byte("ab"), 32))}}
	if b, err := encodeSession(e); err == nil {
		f.Add(b)
	}
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeSession(b)
		if err != nil {
			return
		}
		again, err := encodeSession(e)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := decodeSession(again)
		if err != nil || e2.id != e.id || e2.turn != e.turn || (e2.successor == nil) != (e.successor == nil) {
			t.Fatalf("re-decoded %+v %v", e2, err)
		}
	})
}
