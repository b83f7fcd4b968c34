package node

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestFaultFailover: a provider whose upstream engine fails, resets,
// throttles or is silent before its first token is routed around: the buyer
// gets the healthy provider's answer, the faulty engine sees exactly the
// attempts the rules allow (once per request; not at all within a backoff,
// a Retry-After or an open breaker), and only the provider that served is
// billed. A 400 caused by the request is not retried: the buyer gets the
// provider's reason. A slow but steady answer is waited for, and inflated
// usage is billed as the wire allows. Hedging is off so each request's
// attempts are exact (hedging_test.go covers it).
func TestFaultFailover(t *testing.T) {
	m := newFaultMarket(t, 1, nil)
	fe, bad, good := m.fakes[0], m.fronts[0], m.healthy

	m.run(t, "500 once", func(t *testing.T) {
		fe.once(fault{status: 500, body: errorBody("server_error", "internal", "engine crashed")})
		hits, before, c0 := fe.since(), m.ledger(t), m.counts(bad)
		a := m.ask(t, false, nil)
		a.servedBy(t, good)
		if hits() != 1 || m.counts(bad).Failures != c0.Failures+1 || a.tenzro.Attempts != 2 {
			t.Fatalf("fake hits %d, failures %d → %d, attempts %d", hits(), c0.Failures, m.counts(bad).Failures, a.tenzro.Attempts)
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

	m.run(t, "503 always", func(t *testing.T) {
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
	})

	m.run(t, "a capability the engine lacks", func(t *testing.T) {
		// The fake engine returns no log-probs. That is this provider's
		// limit, not a fault of the request: another provider serves it.
		hits, before, r0 := fe.since(), m.ledger(t), m.counts(bad).Refused
		m.askWith(t, false, nil, map[string]any{"logprobs": true, "top_logprobs": 2}).servedBy(t, good)
		m.billed(t, before, good, 1)
		if hits() != 1 || m.counts(bad).Refused != r0+1 {
			t.Fatalf("fake hits %d, provider %+v", hits(), m.counts(bad))
		}
	})

	m.run(t, "an empty 200", func(t *testing.T) {
		// A finished stream with no text is the engine failing, not an
		// answer: the request fails over and the empty one is not billed.
		fe.once(fault{empty: true})
		hits, before, c0 := fe.since(), m.ledger(t), m.counts(bad)
		for i, stream := range []bool{true, false} {
			if i == 1 {
				fe.once(fault{empty: true})
			}
			a := m.ask(t, stream, nil)
			a.servedBy(t, good)
			if a.text == "" {
				t.Fatalf("stream=%v: the served answer is empty", stream)
			}
		}
		m.billed(t, before, good, 2)
		if hits() != 2 || m.counts(bad).Failures != c0.Failures+2 {
			t.Fatalf("fake hits %d, failures %d → %d", hits(), c0.Failures, m.counts(bad).Failures)
		}
	})

	m.run(t, "reset before headers", func(t *testing.T) {
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
		m.run(t, c.name, func(t *testing.T) {
			fe.always(fault{status: 400, body: errorBody("invalid_request_error", c.code, c.msg)})
			hits, before, g0, c0 := fe.since(), m.ledger(t), m.counts(good).Attempts, m.counts(bad)
			for _, stream := range []bool{false, true} {
				a := m.ask(t, stream, nil)
				if a.status != http.StatusBadRequest || a.err == nil || a.err["code"] != c.code || a.err["message"] != c.msg {
					t.Fatalf("stream=%v: status %d, body %s", stream, a.status, clip(a.raw))
				}
			}
			// Refused, not failed: the request's fault is not held against
			// the provider.
			c1 := m.counts(bad)
			if hits() != 2 || m.counts(good).Attempts != g0 || c1.Refused != c0.Refused+2 || c1.Failures != c0.Failures {
				t.Fatalf("fake hits %d (want 2), healthy attempts %d → %d (want none), provider %+v → %+v",
					hits(), g0, m.counts(good).Attempts, c0, c1)
			}
			m.billed(t, before, "", 0)
		})
	}

	m.run(t, "429 without Retry-After", func(t *testing.T) {
		// Throttled again each time it is tried, the provider is left alone
		// for an exponential backoff with equal jitter: the k-th wait is
		// 500 ms·2^(k-1), never under half that.
		fe.always(fault{status: 429, body: errorBody("rate_limit_error", "rate_limited", "slow down")})
		before, th := m.ledger(t), m.counts(bad).Throttled
		n, gaps := m.throttled(t, 0, fe.hits.Load(), 1200*time.Millisecond)
		if len(gaps) == 0 {
			t.Fatalf("%d requests, the engine saw 1: not used again after its backoff", n)
		}
		for k, g := range gaps {
			if min := 250 * time.Millisecond << k; g < min {
				t.Fatalf("wait %d was %s, under %s: %v", k+1, g, min, gaps)
			}
		}
		if got := m.counts(bad).Throttled - th; got != uint64(len(gaps)+1) {
			t.Fatalf("throttled %d, want %d", got, len(gaps)+1)
		}
		m.billed(t, before, good, n)
	})

	for _, status := range []int{429, 503} {
		m.run(t, fmt.Sprintf("%d with Retry-After", status), func(t *testing.T) {
			typ := map[int]string{429: "rate_limit_error", 503: "server_error"}[status]
			fe.always(fault{status: status, retryAfter: "1", body: errorBody(typ, "busy", "come back in a second")})
			// Pinned to that provider, the buyer gets its status and wait.
			from := fe.hits.Load()
			a := m.ask(t, false, map[string]any{"provider": bad.String()})
			if a.status != status || a.header.Get("Retry-After") != "1" || a.err["message"] != "come back in a second" {
				t.Fatalf("status %d, Retry-After %q: %s", a.status, a.header.Get("Retry-After"), clip(a.raw))
			}
			// It is not called again within the second it asked for.
			before := m.ledger(t)
			n, gaps := m.throttled(t, 0, from, 1500*time.Millisecond)
			if len(gaps) == 0 || gaps[0] < time.Second {
				t.Fatalf("%d requests; the engine's waits %v", n, gaps)
			}
			m.billed(t, before, good, n)
		})
	}

	m.run(t, "slow first token", func(t *testing.T) {
		fe.once(fault{first: 8 * testFirstToken})
		hits, before, cancelled := fe.since(), m.ledger(t), fe.cancelled.Load()
		samples := m.gw.gateway.Snapshot().Providers[bad.String()]
		start := time.Now()
		m.ask(t, true, nil).servedBy(t, good)
		if took := time.Since(start); took > 4*testFirstToken {
			t.Fatalf("failover after %s: the first-token timeout did not fire", took)
		}
		fe.waitCancelled(t, cancelled+1) // the slow engine's work was cancelled
		m.billed(t, before, good, 1)
		if hits() != 1 {
			t.Fatalf("fake hits %d, want 1", hits())
		}
		// The timeout is a latency the router saw: one more sample, and
		// bad's p95 (its hedge delay) rises.
		after := m.gw.gateway.Snapshot().Providers[bad.String()]
		if samples == nil || after == nil || after.LatencySamples != samples.LatencySamples+1 || after.P95Ms <= samples.P95Ms {
			t.Fatalf("latency of the provider that timed out: before %+v, after %+v", samples, after)
		}
	})

	m.run(t, "answer slowly", func(t *testing.T) {
		// Tokens keep coming, each within the stall timeout: the slow
		// provider is waited on, not abandoned.
		fe.once(fault{first: testStall / 4, gap: testStall / 3})
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

	m.run(t, "inflated usage", func(t *testing.T) {
		// The engine claims far more tokens than it produced. The provider
		// signs what its engine said; the gateway bills what crossed the
		// wire: output at most max_tokens (16), input at most the bytes sent.
		fe.once(fault{claim: [2]int{1_000_000, 5000}})
		before := m.ledger(t)
		a := m.ask(t, false, nil)
		a.servedBy(t, bad)
		m.billed(t, before, bad, 1)
		units, _ := a.tenzro.Payment.(map[string]any)["units"].(map[string]any)
		out, in := units["output_tokens"].(float64), units["input_tokens"].(float64)
		if out != 16 || in <= 0 || in >= 4096 || len(a.tenzro.Receipt.Capped) != 2 {
			t.Fatalf("billed %v output and %v input tokens; capped %v", out, in, a.tenzro.Receipt.Capped)
		}
	})

	m.run(t, "flapping", func(t *testing.T) {
		// The engine goes down: each request tries the provider once and
		// fails over, until consecutive failures open its breaker; then
		// requests go around it without touching it. When the engine is
		// back, the breaker's probe after the cooldown finds it healthy
		// and the provider is used again.
		fe.always(fault{reset: true})
		hits, before := fe.since(), m.ledger(t)
		var opened, fifth time.Time
		for i := 1; i <= 8; i++ {
			if i == 5 {
				fifth = time.Now() // the breaker opens during this request, not before
			}
			m.ask(t, i%2 == 0, nil).servedBy(t, good)
			want := int64(min(i, 5))
			// A request that ended within the cooldown (5 s) of the fifth's
			// start ran while the breaker was open; on a loaded machine a
			// later one may be the probe after the cooldown: one hit more.
			if got := hits(); got != want && (i <= 5 || time.Since(fifth) < 5*time.Second || got != want+1) {
				t.Fatalf("after %d requests the engine saw %d, want %d", i, got, want)
			}
			if i == 5 {
				opened = time.Now() // the fifth failure in a row opened the breaker
			}
		}
		m.billed(t, before, good, 8)
		m.heal(t)
		if took := time.Since(opened); took < 4*time.Second { // the cooldown is 5 s
			t.Fatalf("used again after %s, within the breaker's cooldown", took)
		}
		before = m.ledger(t)
		m.ask(t, true, nil).servedBy(t, bad) // closed again: not just the probe
		m.billed(t, before, bad, 1)
	})
}
