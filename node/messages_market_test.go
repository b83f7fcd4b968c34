package node

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestPartsAndToolTurnsThroughTheMarket: a conversation with content
// parts, an assistant turn that called a tool and the tool's answer goes
// from the buyer through the gateway and a provider to an upstream engine
// in OpenAI's shape, field by field, and is receipted and billed (the
// gateway's and the provider's commitments to it agree); a request with
// tools goes only to a provider announcing them, and a malformed one is
// refused naming the field before any provider is asked.
func TestPartsAndToolTurnsThroughTheMarket(t *testing.T) {
	m := newFaultMarket(t, 1, nil)
	fe, p := m.fakes[0], m.fronts[0]
	const msgs = `[{"role":"system","content":[{"type":"text","text":"be brief"}],"name":"ops"},` +
		`{"role":"user","content":[{"type":"text","text":"what is "},{"type":"text","text":"6 x 7"}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"mul","arguments":"{\"a\":6,\"b\":7}"}}]},` +
		`{"role":"tool","content":"42","tool_call_id":"call_1"}]`
	var fields map[string]any
	if err := json.Unmarshal([]byte(`{"messages":`+msgs+`}`), &fields); err != nil {
		t.Fatal(err)
	}
	m.run(t, "parts and tool turns", func(t *testing.T) {
		before := m.ledger(t)
		a := m.askWith(t, false, map[string]any{"verification": "receipt"}, fields)
		a.servedBy(t, p)
		m.billed(t, before, p, 1)
		got, err := json.Marshal(fe.lastBody()["messages"])
		if err != nil {
			t.Fatal(err)
		}
		// Both sides are compared as decoded JSON re-encoded: the fake
		// keeps the body as a map, which orders keys.
		var want any
		if err := json.Unmarshal([]byte(msgs), &want); err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		if string(got) != string(wantJSON) {
			t.Fatalf("the engine got messages\n%s\nwant\n%s", got, wantJSON)
		}
	})
	m.run(t, "tools only to a provider announcing them", func(t *testing.T) {
		before, hits := m.ledger(t), fe.since()
		a := m.askWith(t, false, nil, map[string]any{"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "mul"}}}})
		// The upstream front does not announce tools; the embedded
		// provider does, and serves it.
		a.servedBy(t, m.healthy)
		if hits() != 0 {
			t.Fatal("a request with tools reached an upstream engine that does not announce them")
		}
		m.billed(t, before, m.healthy, 1)
	})
	m.run(t, "malformed tools refused by name", func(t *testing.T) {
		before, hits := m.ledger(t), fe.since()
		a := m.askWith(t, false, nil, map[string]any{"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": ""}}}})
		if a.status != http.StatusBadRequest || a.err["param"] == nil {
			t.Fatalf("status %d, error %v; want 400 naming the field", a.status, a.err)
		}
		if hits() != 0 {
			t.Fatal("a malformed tools request reached an engine")
		}
		m.billed(t, before, p, 0)
	})
}
