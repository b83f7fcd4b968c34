package gateway

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// TestRecoveredProviderBackWithin15s: the cheaper provider answers 503 for
// a minute while a buyer calls every second, then recovers. Every call
// succeeds meanwhile (the other provider serves it), the failing one sees
// at most a dozen of the calls while it is down, and it serves again
// within 15 s of recovering.
func TestRecoveredProviderBackWithin15s(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		down := true
		flaky := func(int, *infer.Request) script {
			if down {
				return script{first: ms, fail: &infer.ErrorFrame{Status: 503, Code: "overloaded", Message: "engine unavailable", Retryable: true}}
			}
			return script{first: ms, tokens: []string{"back"}}
		}
		m := newMarket(t, st, 2, testConfig(), flaky, answer(ms, "ok"))
		p0, p1 := m.provs[0].id, m.provs[1].id
		reached := func() int {
			n := 0
			for _, c := range m.calls() {
				if c.peer == p0 {
					n++
				}
			}
			return n
		}
		for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(time.Second) {
			m.beat()
			if res := mustRoute(t, m, request()); res.Provider.PeerID != p1.String() {
				t.Fatalf("while p0 is down a call was served by %s", res.Provider.PeerID)
			}
		}
		if n := reached(); n > 12 {
			t.Fatalf("the failing provider saw %d calls in its minute down, want at most 12", n)
		} else {
			t.Logf("the failing provider saw %d calls in its minute down", n)
		}
		down = false
		healed := time.Now()
		for {
			m.beat()
			if res := mustRoute(t, m, request()); res.Provider.PeerID == p0.String() {
				break
			}
			if time.Since(healed) > 15*time.Second {
				t.Fatalf("not served by the recovered provider within 15 s")
			}
			time.Sleep(time.Second)
		}
		t.Logf("served by the recovered provider %s after it recovered", time.Since(healed))
	})
}
