package gateway

import (
	"testing"
)

// TestSuspectedProviderGoesLast: a provider the table suspects is tried
// after the others (the cheapest, suspected, is not called when the next
// answers); a heartbeat lifts the suspicion and it is first again; and a
// suspected provider is not made a session's successor.
func TestSuspectedProviderGoesLast(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, answer(ms, "ok"))
		p0, p1, p2 := sm.provs[0].id, sm.provs[1].id, sm.provs[2].id
		sm.table.Suspect(p0)
		req := request()
		req.NoHedge = true
		if res := mustRoute(t, sm.market, req); res.Provider.PeerID != p1.String() || res.Attempts != 1 || len(sm.calls()) != 1 {
			t.Fatalf("with the cheapest suspected: %+v, calls %v", res, peersOf(sm.calls()))
		}
		sm.beatOnly(0, 1, 2)
		if sm.table.Suspected(p0) {
			t.Fatal("a heartbeat did not lift the suspicion")
		}
		if res := mustRoute(t, sm.market, request()); res.Provider.PeerID != p0.String() {
			t.Fatalf("after the heartbeats served by %s, want the cheapest again", res.Provider.PeerID)
		}
		sm.table.Suspect(p1) // the cheapest standby
		first := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
		if first.Primary.Peer != p0.String() || first.Successor == nil || first.Successor.Peer != p2.String() {
			t.Fatalf("session with the cheapest standby suspected: %+v", first)
		}
	})
}
