package node

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
)

// TestUpstreamEngineDies: the engine behind the cheapest provider dies.
// The provider reports the model cold at once (a failed call triggers a
// health check, the state change a heartbeat), the gateway stops sending
// it calls, and when the engine answers again the model is warm and served
// again. Every buyer call succeeds meanwhile.
func TestUpstreamEngineDies(t *testing.T) {
	m := newFaultMarket(t, 1, nil)
	fe, front, good := m.fakes[0], m.fronts[0], m.healthy
	state := func() gossip.ModelState {
		for _, o := range m.gw.Table().Offers(DevnetModelName) {
			if o.Peer == front {
				return o.State
			}
		}
		return ""
	}
	m.ask(t, false, nil).servedBy(t, front)

	fe.down.Store(true)
	killed := time.Now()
	m.ask(t, false, nil).servedBy(t, good) // may reach the dead engine: that is how the provider learns
	nodetest.Eventually(t, 4*time.Second*raceScale, "the fronted model not warm at the gateway", func() bool {
		return state() != gossip.StateWarm
	})
	t.Logf("model not warm at the gateway %s after the engine died", time.Since(killed).Round(time.Millisecond))
	reached := fe.deadHits.Load()
	if reached > 1 {
		t.Fatalf("%d calls reached the dead engine before it was reported, want at most 1", reached)
	}
	before := m.ledger(t)
	for i := range 4 {
		m.ask(t, i%2 == 0, nil).servedBy(t, good)
	}
	m.billed(t, before, good, 4)
	if got := fe.deadHits.Load(); got != reached {
		t.Fatalf("%d calls reached the dead engine after it was reported cold", got-reached)
	}

	fe.down.Store(false)
	revived := time.Now()
	nodetest.Eventually(t, 4*time.Second*raceScale, "the fronted model warm again", func() bool {
		return state() == gossip.StateWarm
	})
	t.Logf("model warm again %s after the engine came back", time.Since(revived).Round(time.Millisecond))
	m.heal(t)
	m.ask(t, true, nil).servedBy(t, front)
}
