package gateway

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/breaker"
	"github.com/tenzrod/tenzrod/router/hedge"
	"github.com/tenzrod/tenzrod/router/strategy"
)

const ms = time.Millisecond

func route(t *testing.T, m *market, req *Request) (*Result, []Delta, error) {
	t.Helper()
	var ds []Delta
	res, err := m.gw.Route(context.Background(), req, func(d Delta) error {
		ds = append(ds, d)
		return nil
	})
	return res, ds, err
}

func mustRoute(t *testing.T, m *market, req *Request) *Result {
	t.Helper()
	res, _, err := route(t, m, req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHedgeFiresAtPrimaryP95: the hedge goes out exactly at the primary's
// p95 of time to first token (clamped), the slower primary is cancelled,
// and only the winner is billed and reported.
func TestHedgeFiresAtPrimaryP95(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		slow := func(n int, _ *infer.Request) script {
			if n < 30 {
				return script{first: 100 * ms, tokens: []string{"a", "b"}}
			}
			return script{first: 400 * ms, tokens: []string{"a", "b"}}
		}
		m := newMarket(t, st, 2, testConfig(), slow, answer(10*ms, "fast", "!"))
		p0, p1 := m.provs[0].id, m.provs[1].id
		for range 30 { // the primary's p95 becomes 100 ms
			req := request()
			req.NoHedge = true
			if res := mustRoute(t, m, req); res.Provider.PeerID != p0.String() {
				t.Fatalf("warm-up served by %s, want the cheaper %s", res.Provider.PeerID, p0)
			}
		}
		p95 := m.gw.latency.Snapshot(p0).P95
		if p95 < 99*ms || p95 > 101*ms {
			t.Fatalf("primary p95 %v after 30 answers at 100 ms", p95)
		}
		before, reportsBefore := balance(t, st), len(m.reports())
		res := mustRoute(t, m, request())
		cs := m.calls()[30:]
		if len(cs) != 2 || cs[0].peer != p0 || cs[1].peer != p1 {
			t.Fatalf("calls %+v, want primary then hedge", cs)
		}
		if d := cs[1].start.Sub(cs[0].start); d != hedge.Delay(candidateOf(m, p0)) || d != min(max(p95, hedge.MinDelay), hedge.MaxDelay) {
			t.Fatalf("hedge sent %v after the primary; p95 %v", d, p95)
		}
		if !cs[0].cancelled || cs[1].cancelled {
			t.Fatalf("loser not cancelled / winner cancelled: %+v %+v", cs[0], cs[1])
		}
		if !res.Hedged || res.Provider.PeerID != p1.String() || res.Text != "fast!" || res.Payment == nil {
			t.Fatalf("result %+v", res)
		}
		if got := before - balance(t, st); got != res.Payment.Price {
			t.Fatalf("charged %d, the winner's price is %d", got, res.Payment.Price)
		}
		rs := m.reports()[reportsBefore:]
		if len(rs) != 1 || rs[0].Peer != p1 || !rs[0].Success {
			t.Fatalf("reports %+v, want one success of the winner", rs)
		}
		if c := m.gw.Snapshot().Providers[p0.String()]; c.Cancelled != 1 || c.Failures != 0 {
			t.Fatalf("loser counts %+v", c)
		}
		// A primary never measured hedges at the maximum delay.
		m2 := newMarket(t, st, 2, testConfig(), answer(time.Second, "x"), answer(10*ms, "y"))
		mustRoute(t, m2, request())
		if cs := m2.calls(); len(cs) != 2 || cs[1].start.Sub(cs[0].start) != hedge.MaxDelay {
			t.Fatalf("unknown latency: calls %+v", cs)
		}
	})
}

func candidateOf(m *market, p peer.ID) strategy.Candidate {
	cands, _, err := m.gw.candidates(context.Background(), request())
	if err != nil {
		panic(err)
	}
	for _, x := range cands {
		if x.Peer == p {
			return x
		}
	}
	panic("no candidate")
}

func peersOf(cs []*call) []peer.ID {
	var out []peer.ID
	for _, c := range cs {
		out = append(out, c.peer)
	}
	return out
}

// TestFailoverToNextBest: failed providers are excluded and the request
// goes to the next best, up to the retry limit.
func TestFailoverToNextBest(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		down := func(int, *infer.Request) script {
			return script{first: ms, fail: &infer.ErrorFrame{Status: http.StatusInternalServerError, Code: terms.CodeInternal}}
		}
		m := newMarket(t, st, 4, testConfig(), down, down, answer(ms, "ok"))
		res := mustRoute(t, m, request())
		cs := m.calls()
		if len(cs) != 3 || cs[0].peer != m.provs[0].id || cs[1].peer != m.provs[1].id || cs[2].peer != m.provs[2].id {
			t.Fatalf("calls %v, want providers 0, 1, 2 once each", peersOf(cs))
		}
		if res.Provider.PeerID != m.provs[2].id.String() || res.Attempts != 3 || res.Text != "ok" {
			t.Fatalf("result %+v", res)
		}
		rs := m.reports()
		if len(rs) != 3 || rs[0].Success || rs[1].Success || !rs[2].Success {
			t.Fatalf("reports %+v: two failures, then the success", rs)
		}

		cfg := testConfig()
		cfg.MaxRetries = 1
		m = newMarket(t, st, 4, cfg, down, down, down, answer(ms, "ok"))
		_, _, err := route(t, m, request())
		var ge *Error
		if !errors.As(err, &ge) || ge.Status < 500 {
			t.Fatalf("retry limit: %v", err)
		}
		if cs := m.calls(); len(cs) != 2 {
			t.Fatalf("MaxRetries 1 made %d calls, want 2", len(cs))
		}
	})
}

// TestBreakerOpensAndProbes: consecutive failures open a provider's
// breaker, it is skipped while open, and after the cooldown one probe
// closes it again.
func TestBreakerOpensAndProbes(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		healed := false
		flaky := func(int, *infer.Request) script {
			if healed {
				return script{first: ms, tokens: []string{"back"}}
			}
			return script{first: ms, fail: errors.New("connection reset")}
		}
		m := newMarket(t, st, 2, testConfig(), flaky, answer(ms, "ok"))
		p0, p1 := m.provs[0].id, m.provs[1].id
		for i := range breaker.DefaultFailures {
			if res := mustRoute(t, m, request()); res.Provider.PeerID != p1.String() {
				t.Fatalf("request %d served by %s", i, res.Provider.PeerID)
			}
		}
		if s := m.gw.breakers.Get(p0).State(); s != breaker.Open {
			t.Fatalf("after %d failures the breaker is %s", breaker.DefaultFailures, s)
		}
		n := len(m.calls())
		mustRoute(t, m, request())
		if cs := m.calls()[n:]; len(cs) != 1 || cs[0].peer != p1 {
			t.Fatalf("open breaker: calls %v, want only the healthy provider", peersOf(cs))
		}
		time.Sleep(breaker.DefaultCooldown)
		m.beat()
		healed = true
		n = len(m.calls())
		res := mustRoute(t, m, request())
		if cs := m.calls()[n:]; len(cs) != 1 || cs[0].peer != p0 || res.Text != "back" {
			t.Fatalf("half-open: calls %v, result %q; want one probe of the cheaper provider", peersOf(cs), res.Text)
		}
		if s := m.gw.breakers.Get(p0).State(); s != breaker.Closed {
			t.Fatalf("after a good probe the breaker is %s", s)
		}
	})
}

// TestBusyFailsOverWithoutBreakerFailure: a busy provider (429, or its
// capacity code) is failed over without counting a failure, and is not
// called again before its Retry-After.
func TestBusyFailsOverWithoutBreakerFailure(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		for _, ef := range []*infer.ErrorFrame{
			{Status: http.StatusTooManyRequests, Code: codeBusy, RetryAfterMs: 2000},
			{Status: http.StatusTooManyRequests, Code: terms.CodeCapacity, RetryAfterMs: 2000},
			{Status: http.StatusServiceUnavailable, Code: codeBusy, RetryAfterMs: 2000},
		} {
			busy := func(int, *infer.Request) script { return script{first: ms, fail: ef} }
			m := newMarket(t, st, 2, testConfig(), busy, answer(ms, "ok"))
			p0 := m.provs[0].id
			for i := range 2 * breaker.DefaultFailures {
				if i%2 == 0 {
					time.Sleep(2001 * ms) // past the Retry-After: p0 is asked again
					m.beat()
				}
				n := len(m.calls())
				res := mustRoute(t, m, request())
				cs := m.calls()[n:]
				if res.Provider.PeerID != m.provs[1].id.String() {
					t.Fatalf("%s: served by %s", ef.Code, res.Provider.PeerID)
				}
				if want := 2 - i%2; len(cs) != want {
					t.Fatalf("%s: request %d made %d calls, want %d (Retry-After honoured)", ef.Code, i, len(cs), want)
				}
			}
			if s := m.gw.breakers.Get(p0).State(); s != breaker.Closed {
				t.Fatalf("%s: busy answers opened the breaker (%s)", ef.Code, s)
			}
			for _, r := range m.reports() {
				if r.Peer == p0 {
					t.Fatalf("%s: busy provider reported as a call: %+v", ef.Code, r)
				}
			}
			if c := m.gw.Snapshot().Providers[p0.String()]; c.Throttled != uint64(breaker.DefaultFailures) || c.Failures != 0 {
				t.Fatalf("%s: counts %+v", ef.Code, c)
			}
		}
	})
}
