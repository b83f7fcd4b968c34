package node

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
)

// TestFaultStreamBreaks: a stream that stalls, is cut, carries a malformed
// chunk or ends without [DONE] after the provider's first tokens is
// continued in place on the healthy provider, which takes the text so far
// as a continuation: the buyer's stream carries the broken provider's
// tokens and then the healthy one's, ends with [DONE], and only the
// healthy provider, whose receipt covers the continuation, is billed.
func TestFaultStreamBreaks(t *testing.T) {
	m := newFaultMarket(t, 1, func(r *RouterConfig) { r.Deadline = 4 * testStall })
	fe, bad, good := m.fakes[0], m.fronts[0], m.healthy
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
		m.run(t, c.name, func(t *testing.T) {
			fe.once(fault{breakAt: 3, how: c.how})
			hits, before, cancelled := fe.since(), m.ledger(t), fe.cancelled.Load()
			cont, f0 := m.gw.gateway.Metrics().Snapshot().Continuations, m.counts(bad).Failures
			a := m.ask(t, c.stream, nil)
			a.servedBy(t, good)
			if !a.tenzro.Continued || a.tenzro.Attempts != 2 || !strings.HasPrefix(a.text, prefix) || len(a.text) <= len(prefix) || c.stream && !a.done {
				t.Fatalf("continued %v after %d attempts, done %v, text %q: want %q and more", a.tenzro.Continued, a.tenzro.Attempts, a.done, a.text, prefix)
			}
			m.billed(t, before, good, 1)
			if hits() != 1 || m.gw.gateway.Metrics().Snapshot().Continuations != cont+1 || m.counts(bad).Failures != f0+1 {
				t.Fatalf("fake hits %d, continuations %d → %d, failures %d → %d", hits(), cont,
					m.gw.gateway.Metrics().Snapshot().Continuations, f0, m.counts(bad).Failures)
			}
			if c.how == "stall" {
				fe.waitCancelled(t, cancelled+1) // the stalled request was abandoned
			}
		})
	}

	m.run(t, "no [DONE] after the finish", func(t *testing.T) {
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

	m.run(t, "the buyer leaves mid-stream", func(t *testing.T) {
		// The provider's work is cancelled at its engine, and the buyer
		// pays for the part it was delivered, no more.
		fe.once(fault{gap: testStall / 2})
		before, cancelled, c0 := m.ledger(t), fe.cancelled.Load(), m.counts(bad).Cancelled
		ctx, cancel := context.WithCancel(context.Background())
		body := `{"model":"` + DevnetModelName + `","stream":true,"max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tenzro":{"strategy":"price","hedge":false}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.gw.APIURL()+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() && !strings.Contains(sc.Text(), fakeWord(0)) {
		}
		cancel()
		resp.Body.Close()
		fe.waitCancelled(t, cancelled+1)
		nodetest.Eventually(t, 5*time.Second, "the attempt counted as cancelled", func() bool { return m.counts(bad).Cancelled == c0+1 })
		nodetest.Eventually(t, 5*time.Second, "the delivered part billed", func() bool { return m.ledger(t).count == before.count+1 })
		m.billed(t, before, bad, 1)
	})

	m.run(t, "slower than the deadline", func(t *testing.T) {
		// Each token comes within the stall timeout, but the answer
		// outlasts the whole-request deadline: the buyer's stream ends with
		// an error event, and nobody is paid for a truncated answer.
		fe.once(fault{gap: testStall * 3 / 4}) // 8 tokens: 6 stall timeouts
		before, cancelled, misses := m.ledger(t), fe.cancelled.Load(), m.gw.gateway.Metrics().Snapshot().DeadlineMisses
		a := m.ask(t, true, nil)
		a.truncated(t, "deadline")
		if !strings.HasPrefix(fakeText(fakeTokens, fakeWord), a.text) || a.text == "" {
			t.Fatalf("partial text %q", a.text)
		}
		a.says(t, "deadline", bad.String())
		fe.waitCancelled(t, cancelled+1)
		m.billed(t, before, "", 0)
		if got := m.gw.gateway.Metrics().Snapshot().DeadlineMisses; got != misses+1 {
			t.Fatalf("deadline misses %d → %d", misses, got)
		}
	})
}
