package node

import (
	"strings"
	"testing"
	"time"
)

// TestFaultStreamBreaks: a stream that stalls, is cut, carries a malformed
// chunk or ends without [DONE] after the provider's first tokens is
// continued in place on the healthy provider, which takes the text so far
// as a continuation: the buyer's stream carries the broken provider's
// tokens and then the healthy one's, ends with [DONE], and only the
// healthy provider, whose receipt covers the continuation, is billed.
func TestFaultStreamBreaks(t *testing.T) {
	m := newFaultMarket(t, 1, func(r *RouterConfig) { r.Deadline = 1500 * time.Millisecond })
	fe, bad, good := m.fakes[0], m.fronts[0], m.healthy
	m.heal(t, 0)
	prefix := fakeText(3, fakeWord)

	for _, c := range []struct {
		name, how string
		stream    bool
	}{
		{"stall mid-stream", "stall", true},
		{"cut at token 3", "cut", true},
		{"cut at token 3, not streamed", "cut", false},
		{"malformed chunk", "malformed", true},
		{"no [DONE] nor finish", "eof", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fe.once(fault{breakAt: 3, how: c.how})
			hits, before, cancelled := fe.since(), m.ledger(t), fe.cancelled.Load()
			cont, f0 := m.gw.gateway.Metrics().Snapshot().Continuations, m.counts(bad).Failures
			a := m.ask(t, c.stream, nil)
			a.servedBy(t, good)
			if !a.tenzro.Continued || !strings.HasPrefix(a.text, prefix) || len(a.text) <= len(prefix) || c.stream && !a.done {
				t.Fatalf("continued %v, done %v, text %q: want %q and more", a.tenzro.Continued, a.done, a.text, prefix)
			}
			m.billed(t, before, good, 1)
			if hits() != 1 || m.gw.gateway.Metrics().Snapshot().Continuations != cont+1 || m.counts(bad).Failures != f0+1 {
				t.Fatalf("fake hits %d, continuations %d → %d, failures %d → %d", hits(), cont,
					m.gw.gateway.Metrics().Snapshot().Continuations, f0, m.counts(bad).Failures)
			}
			if c.how == "stall" {
				fe.waitCancelled(t, cancelled+1) // the stalled request was abandoned
			}
			m.heal(t, 0)
		})
	}

	t.Run("no [DONE] after the finish", func(t *testing.T) {
		// The engine said the answer is finished and gave its usage; only
		// the [DONE] line is missing. That is a complete answer: continuing
		// it elsewhere would append text after the model stopped.
		fe.once(fault{noDone: true})
		before := m.ledger(t)
		a := m.ask(t, true, nil)
		a.servedBy(t, bad)
		if a.tenzro.Continued || !a.done || a.text != fakeText(fakeTokens, fakeWord) {
			t.Fatalf("continued %v, done %v, text %q", a.tenzro.Continued, a.done, a.text)
		}
		m.billed(t, before, bad, 1)
	})

	t.Run("slower than the deadline", func(t *testing.T) {
		// Each token comes within the stall timeout, but the answer
		// outlasts the whole-request deadline: the buyer's stream ends with
		// an error event, and nobody is paid for a truncated answer.
		fe.once(fault{gap: 300 * time.Millisecond})
		before, cancelled, misses := m.ledger(t), fe.cancelled.Load(), m.gw.gateway.Metrics().Snapshot().DeadlineMisses
		a := m.ask(t, true, nil)
		a.truncated(t, "deadline")
		if !strings.HasPrefix(fakeText(fakeTokens, fakeWord), a.text) || a.text == "" {
			t.Fatalf("partial text %q", a.text)
		}
		fe.waitCancelled(t, cancelled+1)
		m.billed(t, before, "", 0)
		if got := m.gw.gateway.Metrics().Snapshot().DeadlineMisses; got != misses+1 {
			t.Fatalf("deadline misses %d → %d", misses, got)
		}
	})
}
