package node

import (
	"net/http"
	"testing"
	"time"
)

// TestFaultFailover: a provider whose upstream engine refuses, fails or
// resets before answering is routed around: the buyer gets the healthy
// provider's answer, the faulty engine sees exactly the attempts the rules
// allow, and only the provider that served is billed. A 400 caused by the
// request is not retried: the buyer gets the provider's reason. Hedging is
// off so each request's attempts are exact (hedging_test.go covers it).
func TestFaultFailover(t *testing.T) {
	m := newFaultMarket(t, 1, nil)
	fe, bad, good := m.fakes[0], m.fronts[0], m.healthy
	m.heal(t, 0)

	t.Run("500 once", func(t *testing.T) {
		fe.once(fault{status: 500, body: errorBody("server_error", "internal", "engine crashed")})
		hits, before, c0 := fe.since(), m.ledger(t), m.counts(bad)
		m.ask(t, false, nil).servedBy(t, good)
		if hits() != 1 || m.counts(bad).Failures != c0.Failures+1 {
			t.Fatalf("fake hits %d, failures %d → %d", hits(), c0.Failures, m.counts(bad).Failures)
		}
		m.billed(t, before, good, 1)
		// One 500 does not bar the provider: the next request is its.
		before = m.ledger(t)
		m.ask(t, false, nil).servedBy(t, bad)
		m.billed(t, before, bad, 1)
		if hits() != 2 {
			t.Fatalf("fake hits %d, want 2", hits())
		}
	})

	t.Run("503 always", func(t *testing.T) {
		fe.always(fault{status: 503, body: errorBody("server_error", "overloaded", "engine unavailable")})
		hits, before, fo := fe.since(), m.ledger(t), m.gw.gateway.Metrics().Snapshot().Failovers
		for i := 1; i <= 3; i++ {
			m.ask(t, i%2 == 0, nil).servedBy(t, good)
			if hits() != int64(i) {
				t.Fatalf("after %d requests the fake saw %d: a provider is tried once per request", i, hits())
			}
		}
		m.billed(t, before, good, 3)
		if got := m.gw.gateway.Metrics().Snapshot().Failovers - fo; got != 3 {
			t.Fatalf("failovers %d, want 3", got)
		}
		m.heal(t, 0)
	})

	t.Run("reset before headers", func(t *testing.T) {
		fe.once(fault{reset: true})
		hits, before := fe.since(), m.ledger(t)
		m.ask(t, true, nil).servedBy(t, good)
		m.billed(t, before, good, 1)
		if hits() != 1 {
			t.Fatalf("fake hits %d, want 1", hits())
		}
	})

	for _, c := range []struct{ name, code, msg string }{
		{"400 context length", "context_length_exceeded", "This model's maximum context length is 2048 tokens"},
		{"400 content policy", "content_policy_violation", "Your request was rejected by the safety system"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fe.always(fault{status: 400, body: errorBody("invalid_request_error", c.code, c.msg)})
			hits, before, g0 := fe.since(), m.ledger(t), m.counts(good).Attempts
			for _, stream := range []bool{false, true} {
				a := m.ask(t, stream, nil)
				if a.status != http.StatusBadRequest || a.err == nil || a.err["code"] != c.code || a.err["message"] != c.msg {
					t.Fatalf("stream=%v: status %d, body %s", stream, a.status, a.raw)
				}
			}
			if hits() != 2 || m.counts(good).Attempts != g0 {
				t.Fatalf("fake hits %d (want 2), healthy attempts %d → %d (want none)", hits(), g0, m.counts(good).Attempts)
			}
			m.billed(t, before, "", 0)
			fe.always(fault{})
		})
	}

	t.Run("429 without Retry-After", func(t *testing.T) {
		fe.always(fault{status: 429, body: errorBody("rate_limit_error", "rate_limited", "slow down")})
		hits, before, start := fe.since(), m.ledger(t), time.Now()
		for range 3 { // the first meets the 429; the others come within its backoff
			m.ask(t, false, nil).servedBy(t, good)
		}
		if hits() != 1 {
			t.Fatalf("fake hits %d: a throttled provider was not given its backoff", hits())
		}
		m.billed(t, before, good, 3)
		m.heal(t, 0)
		// The first backoff is 500 ms with equal jitter: never under 250 ms.
		if took := time.Since(start); took < 250*time.Millisecond {
			t.Fatalf("used again after %s", took)
		}
	})

	t.Run("429 with Retry-After", func(t *testing.T) {
		fe.always(fault{status: 429, retryAfter: "1", body: errorBody("rate_limit_error", "rate_limited", "slow down")})
		hits, before, start := fe.since(), m.ledger(t), time.Now()
		// Pinned to the throttled provider, the buyer gets its 429 and wait.
		a := m.ask(t, false, map[string]any{"provider": bad.String()})
		if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "1" || a.err["message"] != "slow down" {
			t.Fatalf("status %d, Retry-After %q: %s", a.status, a.header.Get("Retry-After"), a.raw)
		}
		// Within the second it asked for, it is not called again.
		n := 0
		for ; n == 0 || time.Since(start) < 700*time.Millisecond; n++ {
			m.ask(t, true, nil).servedBy(t, good)
		}
		if hits() != 1 {
			t.Fatalf("fake hits %d during its Retry-After", hits())
		}
		m.billed(t, before, good, n)
		m.heal(t, 0)
		if took := time.Since(start); took < time.Second {
			t.Fatalf("used again after %s, before its Retry-After", took)
		}
	})

	t.Run("slow first token", func(t *testing.T) {
		fe.once(fault{first: 3 * time.Second})
		hits, before, cancelled := fe.since(), m.ledger(t), fe.cancelled.Load()
		start := time.Now()
		m.ask(t, true, nil).servedBy(t, good)
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("failover after %s: the first-token timeout did not fire", took)
		}
		fe.waitCancelled(t, cancelled+1) // the slow engine's work was cancelled
		m.billed(t, before, good, 1)
		if hits() != 1 {
			t.Fatalf("fake hits %d, want 1", hits())
		}
	})

	t.Run("answer slowly", func(t *testing.T) {
		// Tokens keep coming, each within the stall timeout: the slow
		// provider is waited on, not abandoned.
		fe.once(fault{first: 100 * time.Millisecond, gap: 150 * time.Millisecond})
		hits, before := fe.since(), m.ledger(t)
		a := m.ask(t, true, nil)
		a.servedBy(t, bad)
		if !a.done || a.text != fakeText(fakeTokens, fakeWord) || a.tenzro.Continued {
			t.Fatalf("answer %q, done %v, continued %v", a.text, a.done, a.tenzro.Continued)
		}
		m.billed(t, before, bad, 1)
		if hits() != 1 {
			t.Fatalf("fake hits %d, want 1", hits())
		}
	})
}
