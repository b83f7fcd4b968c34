package node

import (
	"strings"
	"testing"
)

// TestFaultRestartCleanly: the provider next in line after a stream breaks
// fronts an upstream engine configured not to continue another provider's
// text (continuation = "none"). The gateway restarts the request there and skips the text the
// buyer already has, so the buyer's stream reads as one answer. If the
// restart diverges from what was sent, or breaks too, or nobody can take
// over, the stream ends with an explicit error event and no [DONE], and
// nobody is paid.
func TestFaultRestartCleanly(t *testing.T) {
	noCont := func(mc *ModelConfig) { mc.Continuation = "none" }
	m := newFaultMarketWith(t, 2, nil, noCont) // by price: fakes[0], fakes[1], then the healthy provider
	a, b := m.fakes[0], m.fakes[1]
	whole, prefix := fakeText(fakeTokens, fakeWord), fakeText(3, fakeWord)

	m.run(t, "successor restarts cleanly", func(t *testing.T) {
		a.once(fault{breakAt: 3, how: "cut"})
		ha, hb, before, g0 := a.since(), b.since(), m.ledger(t), m.counts(m.healthy).Attempts
		rb := m.counts(m.fronts[1]).Refused
		ans := m.ask(t, true, nil)
		ans.servedBy(t, m.fronts[1])
		// Three attempts: the break, the declined continuation, the restart.
		if ans.text != whole || !ans.done || !ans.tenzro.Continued || ans.tenzro.Attempts != 3 {
			t.Fatalf("text %q (want %q), done %v, continued %v, attempts %d", ans.text, whole, ans.done, ans.tenzro.Continued, ans.tenzro.Attempts)
		}
		// The successor is paid for the answer it produced, repeat
		// included: its receipt covers all of it.
		m.billed(t, before, m.fronts[1], 1)
		// The successor declined the continuation (not a failure of its
		// own, and never sent to its engine), then served the restart.
		if ha() != 1 || hb() != 1 || m.counts(m.healthy).Attempts != g0 || m.counts(m.fronts[1]).Refused != rb+1 {
			t.Fatalf("fake hits %d and %d (want 1 each), healthy attempts %d → %d, successor %+v",
				ha(), hb(), g0, m.counts(m.healthy).Attempts, m.counts(m.fronts[1]))
		}
	})

	m.run(t, "restart diverges", func(t *testing.T) {
		a.once(fault{breakAt: 3, how: "cut"})
		b.once(fault{word: func(i int) string { return strings.ToUpper(fakeWord(i)) }})
		before := m.ledger(t)
		ans := m.ask(t, true, nil)
		ans.truncated(t, "stream_interrupted")
		if ans.text != prefix {
			t.Fatalf("text %q, want only %q", ans.text, prefix)
		}
		ans.says(t, "restart differs from the text already sent", m.fronts[0].String(), m.fronts[1].String())
		m.billed(t, before, "", 0)
	})

	m.run(t, "continuation breaks too", func(t *testing.T) {
		a.once(fault{breakAt: 3, how: "cut"})
		b.once(fault{breakAt: 5, how: "cut"})
		ha, hb, before := a.since(), b.since(), m.ledger(t)
		fa, fb := m.counts(m.fronts[0]).Failures, m.counts(m.fronts[1]).Failures
		ans := m.ask(t, true, nil)
		ans.truncated(t, "stream_interrupted")
		if ans.text != fakeText(5, fakeWord) { // the restart's tokens 3 and 4 reached the buyer
			t.Fatalf("text %q", ans.text)
		}
		ans.says(t, "broke too", m.fronts[0].String(), m.fronts[1].String())
		m.billed(t, before, "", 0)
		if ha() != 1 || hb() != 1 || m.counts(m.fronts[0]).Failures != fa+1 || m.counts(m.fronts[1]).Failures != fb+1 {
			t.Fatalf("fake hits %d and %d, failures %+v %+v", ha(), hb(), m.counts(m.fronts[0]), m.counts(m.fronts[1]))
		}
	})

	m.run(t, "nobody can take over", func(t *testing.T) {
		// Pinned to the provider that breaks: no successor is allowed.
		a.once(fault{breakAt: 3, how: "cut"})
		before, cont := m.ledger(t), m.gw.gateway.Metrics().Snapshot().Continuations
		ans := m.ask(t, true, map[string]any{"provider": m.fronts[0].String()})
		ans.truncated(t, "stream_interrupted")
		if ans.text != prefix {
			t.Fatalf("text %q", ans.text)
		}
		ans.says(t, "no other provider can continue it", m.fronts[0].String())
		m.billed(t, before, "", 0)
		if got := m.gw.gateway.Metrics().Snapshot().Continuations; got != cont {
			t.Fatalf("continuations %d → %d: nothing was continued", cont, got)
		}
	})
}

// says checks the error event's message: one line, naming what failed
// and each provider given, and never blaming the buyer who stayed.
func (a answer) says(t *testing.T, what string, providers ...string) {
	t.Helper()
	msg, _ := a.err["message"].(string)
	if !strings.Contains(msg, what) || strings.Contains(msg, "\n") || strings.Contains(msg, "buyer") {
		t.Fatalf("error message %q: want one line saying %q, not blaming the buyer", msg, what)
	}
	for _, p := range providers {
		if !strings.Contains(msg, p) {
			t.Fatalf("error message %q does not name provider %s", msg, p)
		}
	}
}
