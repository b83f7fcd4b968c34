package node

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// TestHedging: a primary slow to its first token gets a hedge at its own
// p95 of time to first token, clamped to [40 ms, 500 ms] (500 ms while
// unknown). The first to answer wins; the loser's request is cancelled at
// its engine; only the winner is billed; the metrics count hedges
// dispatched and won. A buyer can opt out. Hedging is on by default here:
// the requests leave the option out.
func TestHedging(t *testing.T) {
	m := newFaultMarket(t, 2, func(r *RouterConfig) {
		r.Deadline, r.FirstTokenTimeout, r.StallTimeout = 6*time.Second, 4*time.Second, 4*time.Second
	})
	a, b := m.fakes[0], m.fakes[1] // by price: a is the primary, b the hedge
	pa, pb := m.fronts[0], m.fronts[1]
	hedgeOn := map[string]any{"hedge": nil}
	snap := func() gateway.Snapshot { return m.gw.gateway.Metrics().Snapshot() }

	t.Run("the hedge wins", func(t *testing.T) {
		a.once(fault{first: 2 * time.Second})
		before, s0, ca, cb := m.ledger(t), snap(), m.counts(pa), m.counts(pb)
		start := time.Now()
		ans := m.ask(t, true, hedgeOn)
		took := time.Since(start)
		ans.servedBy(t, pb)
		// The primary has no latency yet: the hedge waits the full 500 ms.
		if !ans.tenzro.Hedged || took < 500*time.Millisecond || took > 1500*time.Millisecond {
			t.Fatalf("hedged %v after %s", ans.tenzro.Hedged, took)
		}
		a.waitCancelled(t, 1) // the loser's work was stopped at its engine
		m.billed(t, before, pb, 1)
		s1 := snap()
		if s1.HedgesDispatched != s0.HedgesDispatched+1 || s1.HedgesWon != s0.HedgesWon+1 || m.counts(pb).HedgeWon != cb.HedgeWon+1 {
			t.Fatalf("hedges %d → %d, won %d → %d, winner %+v", s0.HedgesDispatched, s1.HedgesDispatched, s0.HedgesWon, s1.HedgesWon, m.counts(pb))
		}
		nodetest.Eventually(t, 5*time.Second, "the loser counted as cancelled", func() bool { return m.counts(pa).Cancelled == ca.Cancelled+1 })
		if m.counts(m.healthy).Attempts != 0 {
			t.Fatalf("a third provider was tried: %+v", m.counts(m.healthy))
		}
	})

	t.Run("the hedge delay follows the primary's p95", func(t *testing.T) {
		for range 8 { // fast answers: the primary's p95 drops to the 40 ms floor
			m.ask(t, false, nil).servedBy(t, pa)
		}
		a.once(fault{first: 2 * time.Second})
		before, s0 := m.ledger(t), snap()
		start := time.Now()
		ans := m.ask(t, false, hedgeOn)
		took := time.Since(start)
		ans.servedBy(t, pb)
		if !ans.tenzro.Hedged || took >= 500*time.Millisecond {
			t.Fatalf("hedged %v after %s: the delay did not follow the primary's p95", ans.tenzro.Hedged, took)
		}
		a.waitCancelled(t, 2)
		m.billed(t, before, pb, 1)
		if s1 := snap(); s1.HedgesDispatched != s0.HedgesDispatched+1 || s1.HedgesWon != s0.HedgesWon+1 {
			t.Fatalf("hedges %d → %d, won %d → %d", s0.HedgesDispatched, s1.HedgesDispatched, s0.HedgesWon, s1.HedgesWon)
		}
	})

	t.Run("the primary wins, the hedge is cancelled", func(t *testing.T) {
		a.once(fault{first: 700 * time.Millisecond})
		b.once(fault{first: 3 * time.Second})
		before, s0, cb := m.ledger(t), snap(), b.cancelled.Load()
		ans := m.ask(t, true, hedgeOn)
		ans.servedBy(t, pa)
		if !ans.tenzro.Hedged || ans.text != fakeText(fakeTokens, fakeWord) {
			t.Fatalf("hedged %v, text %q", ans.tenzro.Hedged, ans.text)
		}
		b.waitCancelled(t, cb+1)
		m.billed(t, before, pa, 1)
		if s1 := snap(); s1.HedgesDispatched != s0.HedgesDispatched+1 || s1.HedgesWon != s0.HedgesWon {
			t.Fatalf("hedges %d → %d, won %d → %d", s0.HedgesDispatched, s1.HedgesDispatched, s0.HedgesWon, s1.HedgesWon)
		}
	})

	t.Run("never to a provider in backoff", func(t *testing.T) {
		// b asks for seven seconds' rest (longer than the gateway waits
		// for the only provider of a pinned call, so the buyer hears the
		// 429); a hedge within them goes past it to the next provider.
		b.once(fault{status: 429, retryAfter: "7", body: errorBody("rate_limit_error", "rate_limited", "slow down")})
		if ans := m.ask(t, false, map[string]any{"provider": pb.String()}); ans.status != 429 {
			t.Fatalf("status %d: %s", ans.status, clip(ans.raw))
		}
		a.once(fault{first: 2 * time.Second})
		hb, before, s0 := b.since(), m.ledger(t), snap()
		ans := m.ask(t, false, hedgeOn)
		ans.servedBy(t, m.healthy)
		if !ans.tenzro.Hedged || hb() != 0 {
			t.Fatalf("hedged %v; the throttled provider's engine saw %d requests", ans.tenzro.Hedged, hb())
		}
		m.billed(t, before, m.healthy, 1)
		if s1 := snap(); s1.HedgesWon != s0.HedgesWon+1 {
			t.Fatalf("hedges won %d → %d", s0.HedgesWon, s1.HedgesWon)
		}
	})

	t.Run("opted out", func(t *testing.T) {
		a.once(fault{first: time.Second})
		hb, before, s0 := b.since(), m.ledger(t), snap()
		start := time.Now()
		ans := m.ask(t, true, map[string]any{"hedge": false})
		ans.servedBy(t, pa)
		if ans.tenzro.Hedged || time.Since(start) < time.Second || hb() != 0 {
			t.Fatalf("hedged %v after %s; the hedge provider's engine saw %d requests", ans.tenzro.Hedged, time.Since(start), hb())
		}
		m.billed(t, before, pa, 1)
		if s1 := snap(); s1.HedgesDispatched != s0.HedgesDispatched {
			t.Fatalf("hedges %d → %d", s0.HedgesDispatched, s1.HedgesDispatched)
		}
	})
}
