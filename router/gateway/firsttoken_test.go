package gateway

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/router"
)

// silentAfter answers its first n calls after first, then accepts every
// call and never sends a token: a provider killed with its connection not
// yet known dead.
func silentAfter(n int, first time.Duration) func(int, *infer.Request) script {
	return func(i int, _ *infer.Request) script {
		if i < n {
			return script{first: first, tokens: []string{"ok"}}
		}
		return script{first: time.Hour, tokens: []string{"late"}}
	}
}

// TestFirstTokenBoundFollowsProviderP95: a provider that goes silent is
// abandoned at 4 × its own p95 of time to first token, clamped to
// [2 s, first_token_timeout], and the request goes to the next provider
// at once; a provider not yet measured gets first_token_timeout.
func TestFirstTokenBoundFollowsProviderP95(t *testing.T) {
	const bound = 30 * time.Second
	for _, tc := range []struct {
		name   string
		warm   int           // answers before it goes silent
		first  time.Duration // its time to first token while it answered
		expect func(p95 time.Duration) time.Duration
	}{
		{"p95-derived", firstTokenSamples, time.Second, func(p95 time.Duration) time.Duration { return firstTokenFactor * p95 }},
		{"floor", firstTokenSamples, 100 * ms, func(time.Duration) time.Duration { return firstTokenMin }},
		{"ceiling", firstTokenSamples, 10 * time.Second, func(time.Duration) time.Duration { return bound }},
		{"unmeasured", 0, time.Second, func(time.Duration) time.Duration { return bound }},
		{"too few samples", firstTokenSamples - 1, time.Second, func(time.Duration) time.Duration { return bound }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T, st *bubbleLedger) {
				cfg := testConfig()
				cfg.FirstTokenTimeout = bound
				m := newMarket(t, st, 2, cfg, silentAfter(tc.warm, tc.first), answer(10*ms, "next"))
				p0, p1 := m.provs[0].id, m.provs[1].id
				for range tc.warm {
					req := request()
					req.NoHedge = true
					if res := mustRoute(t, m, req); res.Provider.PeerID != p0.String() {
						t.Fatalf("warm-up served by %s", res.Provider.PeerID)
					}
					m.beat()
				}
				p95 := m.gw.latency.Snapshot(p0).P95
				want := tc.expect(p95)
				if tc.name == "p95-derived" && (want < 3900*ms || want > 4100*ms) {
					t.Fatalf("4 × p95 is %s after answers at 1 s", want)
				}
				req := request()
				req.NoHedge = true
				stop := keepBeating(m)
				res := mustRoute(t, m, req)
				stop()
				cs := m.calls()[tc.warm:]
				if len(cs) != 2 || cs[0].peer != p0 || cs[1].peer != p1 {
					t.Fatalf("calls %v, want the silent provider then the next", peersOf(cs))
				}
				if cs[0].cfg.FirstTokenTimeout != want || !cs[0].timedOut {
					t.Fatalf("silent provider's first-token bound %s (timed out %v), want %s", cs[0].cfg.FirstTokenTimeout, cs[0].timedOut, want)
				}
				if d := cs[1].start.Sub(cs[0].start); d != want {
					t.Fatalf("next provider called %s after the silent one, want %s", d, want)
				}
				if res.Provider.PeerID != p1.String() || res.Attempts != 2 || res.Text != "next" {
					t.Fatalf("result %+v", res)
				}
			})
		})
	}
}

// keepBeating heartbeats every provider of m on the heartbeat interval
// until stop is called: a wait of many seconds must not take the next
// provider down with the silent one.
func keepBeating(m *market) (stop func()) {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(router.HeartbeatInterval):
				m.beat()
			}
		}
	}()
	return func() { close(done) }
}

// TestSilentPrimaryFailsOverAtP95Bound: a session's primary that accepts
// the turn and sends nothing is left at its p95-derived bound, not
// first_token_timeout, and the turn goes to the warm successor.
func TestSilentPrimaryFailsOverAtP95Bound(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newStandbyMarket(t, st, silentAfter(firstTokenSamples, time.Second), answer(ms, "ok"))
		sm.gw.cfg.FirstTokenTimeout = 30 * time.Second
		p0, p1 := sm.provs[0].id, sm.provs[1].id
		s := &SessionRequest{Continuity: ContinuityOn}
		for range firstTokenSamples {
			info := sm.mustTurn(t, s)
			if info.ServedBy != ServedByPrimary || info.Primary.Peer != p0.String() {
				t.Fatalf("warm turn %+v", info)
			}
			s.ID = info.ID
			sm.beatOnly(0, 1, 2)
		}
		want := firstTokenFactor * sm.gw.latency.Snapshot(p0).P95
		n := len(sm.calls())
		info := sm.mustTurn(t, s)
		cs := sm.calls()[n:]
		if len(cs) != 2 || cs[0].peer != p0 || cs[1].peer != p1 || !cs[1].req.Session.Failover {
			t.Fatalf("calls %v", peersOf(cs))
		}
		if !cs[0].timedOut || cs[0].cfg.FirstTokenTimeout != want || cs[1].start.Sub(cs[0].start) != want || want >= sm.gw.cfg.FirstTokenTimeout {
			t.Fatalf("primary left after %s (bound %s, timed out %v), want %s", cs[1].start.Sub(cs[0].start), cs[0].cfg.FirstTokenTimeout, cs[0].timedOut, want)
		}
		if info.ServedBy != ServedBySuccessor || info.Primary.Peer != p1.String() {
			t.Fatalf("failed-over turn %+v", info)
		}
	})
}
