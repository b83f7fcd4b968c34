package node

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestFaultContinueOnUpstream: both fronted providers sit before engines
// that sample (their text differs on every request). A stream cut after
// three tokens continues on the other upstream provider as an assistant
// prefix: the engine gets the original messages plus a final assistant
// message holding the text so far, the buyer gets that text followed by
// the continuation, [DONE] once, and the continuing provider alone is paid
// for the new tokens only.
func TestFaultContinueOnUpstream(t *testing.T) {
	m := newFaultMarket(t, 2, nil)
	a, b := m.fakes[0], m.fakes[1]
	sampled := func(tag string) func(int) string {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		return func(i int) string { return fmt.Sprintf("%s%d-%d ", tag, i, r.IntN(1000)) }
	}
	aw, bw := sampled("a"), sampled("b")
	prefix := ""
	aWords := func(i int) string {
		w := aw(i)
		if i < 3 {
			prefix += w
		}
		return w
	}
	var cont string
	bWords := func(i int) string { w := bw(i); cont += w; return w }

	m.run(t, "cut after three tokens", func(t *testing.T) {
		a.once(fault{breakAt: 3, how: "cut", word: aWords})
		b.once(fault{word: bWords})
		before := m.ledger(t)
		ans := m.ask(t, true, nil)
		ans.servedBy(t, m.fronts[1])
		if want := prefix + cont; ans.text != want || !ans.done || !ans.tenzro.Continued || ans.tenzro.Attempts != 2 {
			t.Fatalf("text %q (want %q), done %v, continued %v, attempts %d", ans.text, want, ans.done, ans.tenzro.Continued, ans.tenzro.Attempts)
		}
		body := b.lastBody()
		msgs, _ := body["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		if len(msgs) != 2 || last["role"] != "assistant" || last["content"] != prefix || body["continue_final_message"] != true || body["add_generation_prompt"] != false {
			t.Fatalf("the continuing engine got %v", body)
		}
		m.billed(t, before, m.fronts[1], 1)
		recs, err := m.gw.store.ListPayments("alice", 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := recs[len(recs)-1].Units.OutputTokens; got != fakeTokens {
			t.Fatalf("billed %d output tokens, want the continuation's %d only", got, fakeTokens)
		}
	})

	m.run(t, "prefill refused: a clean restart", func(t *testing.T) {
		// The engine refuses the assistant prefix; the provider reports
		// the continuation unsupported and the gateway restarts the
		// answer there, skipping the text the buyer has.
		a.once(fault{breakAt: 3, how: "cut"})
		b.once(fault{status: 400, body: errorBody("invalid_request_error", "bad_request", "continue_final_message is not supported")})
		hb, before := b.since(), m.ledger(t)
		ans := m.ask(t, true, nil)
		ans.servedBy(t, m.fronts[1])
		if whole := fakeText(fakeTokens, fakeWord); ans.text != whole || !ans.done || !ans.tenzro.Continued || ans.tenzro.Attempts != 3 {
			t.Fatalf("text %q (want %q), done %v, continued %v, attempts %d", ans.text, whole, ans.done, ans.tenzro.Continued, ans.tenzro.Attempts)
		}
		if hb() != 2 {
			t.Fatalf("the successor's engine saw %d requests, want the refused prefill and the restart", hb())
		}
		m.billed(t, before, m.fronts[1], 1)
	})
}

// TestProbedContinuationRefusedAtOnce: the successor's engine never
// continues an assistant prefix, and the provider found that out at start
// (one refused probe, then text completions accepted: raw_prompt). A stream
// cut on the first provider is refused as a continuation by the second
// without a round trip to its engine, and restarted there cleanly: the
// engine sees the restart alone.
func TestProbedContinuationRefusedAtOnce(t *testing.T) {
	m := newFaultMarketEngines(t, 2, nil, nil, func(i int, fe *fakeEngine) { fe.noPrefix = i == 1 })
	a, b := m.fakes[0], m.fakes[1]
	if n := b.prefixRefused.Load(); n != 1 {
		t.Fatalf("the engine refused %d prefix probes at start, want 1", n)
	}
	a.once(fault{breakAt: 3, how: "cut"})
	hb, before := b.since(), m.ledger(t)
	ans := m.ask(t, true, nil)
	ans.servedBy(t, m.fronts[1])
	if whole := fakeText(fakeTokens, fakeWord); ans.text != whole || !ans.done || !ans.tenzro.Continued || ans.tenzro.Attempts != 3 {
		t.Fatalf("text %q (want %q), done %v, continued %v, attempts %d", ans.text, whole, ans.done, ans.tenzro.Continued, ans.tenzro.Attempts)
	}
	if hb() != 1 || b.prefixRefused.Load() != 1 {
		t.Fatalf("the successor's engine saw %d requests and refused %d prefixes, want the restart alone", hb(), b.prefixRefused.Load())
	}
	m.billed(t, before, m.fronts[1], 1)
}
