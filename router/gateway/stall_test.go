package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// TestStallTimeoutFollowsProviderPace: a provider's first streams get the
// configured stall_timeout; once 64 of its gaps between tokens are known,
// 16 × their p95 (here 16 × 200 ms = 3.2 s), never below stall_min (a fast
// provider gets 2 s) and off when stall_timeout is 0.
func TestStallTimeoutFollowsProviderPace(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		paced := func(gap time.Duration) func(int, *infer.Request) script {
			return func(int, *infer.Request) script {
				return script{first: ms, gap: gap, tokens: strings.Split(strings.Repeat("x", 20), "")}
			}
		}
		cfg := testConfig()
		cfg.StallTimeout, cfg.StallMin = 10*time.Second, 2*time.Second
		m := newMarket(t, st, 2, cfg, paced(200*ms), paced(10*ms))
		for range 5 { // 19 gaps a stream: the fifth stream follows the pace
			req := request()
			req.NoHedge = true
			mustRoute(t, m, req)
			m.beat()
		}
		cs := m.calls()
		for i, c := range cs[:4] {
			if c.cfg.StallTimeout != cfg.StallTimeout {
				t.Fatalf("stream %d (%d gaps known) got stall timeout %s, want the configured %s", i, 19*i, c.cfg.StallTimeout, cfg.StallTimeout)
			}
		}
		if got, want := cs[4].cfg.StallTimeout, 16*200*ms; got != want {
			t.Fatalf("after 76 gaps of 200 ms the stall timeout is %s, want %s", got, want)
		}

		fast := newMarket(t, st, 1, cfg, paced(10*ms))
		for range 5 {
			mustRoute(t, fast, request())
			fast.beat()
		}
		if got := fast.calls()[4].cfg.StallTimeout; got != cfg.StallMin {
			t.Fatalf("a 10 ms provider's stall timeout is %s, want stall_min %s", got, cfg.StallMin)
		}

		off := testConfig() // stall_timeout 0: no stall detection, paced or not
		none := newMarket(t, st, 1, off, paced(10*ms))
		for range 5 {
			mustRoute(t, none, request())
			none.beat()
		}
		if got := none.calls()[4].cfg.StallTimeout; got != 0 {
			t.Fatalf("stall detection off, yet a stream got stall timeout %s", got)
		}
	})
}

func TestStallMinValidated(t *testing.T) {
	c := DefaultConfig()
	c.StallMin = -time.Second
	if err := c.Validate("router."); err == nil || !strings.Contains(err.Error(), "router.stall_min") {
		t.Fatalf("negative stall_min: %v", err)
	}
}
