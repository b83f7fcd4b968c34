package shell

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// gossipLog serves tenzro_tailGossip from the tail_events.json fixture: the
// head is seq 7, pages hold at most pageSize events, and a poll with nothing
// after its cursor waits (until wait_ms or the request ends), signalling
// polling once it does.
type gossipLog struct {
	events   []json.RawMessage
	pageSize int
	polling  chan struct{}
}

func newGossipLog(t *testing.T, node *fakeNode, pageSize int) *gossipLog {
	g := &gossipLog{pageSize: pageSize, polling: make(chan struct{}, 100)}
	if err := json.Unmarshal(fixture(t, "tail_events.json"), &g.events); err != nil {
		t.Fatal(err)
	}
	node.handle("tenzro_tailGossip", g.serve)
	return g
}

func (g *gossipLog) serve(ctx context.Context, raw json.RawMessage) (any, *RPCError) {
	var p struct {
		Topic  string  `json:"topic"`
		After  *uint64 `json:"after"`
		Limit  *int    `json:"limit"`
		WaitMS int64   `json:"wait_ms"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Topic == "" || p.After == nil || p.Limit == nil {
		return nil, &RPCError{Code: -32602, Message: "bad tail params: " + string(raw)}
	}
	if *p.Limit == 0 {
		return map[string]any{"events": []any{}, "next": 7}, nil
	}
	var page []json.RawMessage
	next := *p.After
	for _, ev := range g.events {
		var e struct{ Seq uint64 }
		_ = json.Unmarshal(ev, &e)
		if e.Seq > *p.After && len(page) < min(*p.Limit, g.pageSize) {
			page, next = append(page, ev), e.Seq
		}
	}
	if len(page) == 0 {
		g.polling <- struct{}{}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(p.WaitMS) * time.Millisecond):
		}
		page = []json.RawMessage{}
	}
	return map[string]any{"events": page, "next": next}, nil
}

func TestTailStopsAfterN(t *testing.T) {
	node := newFakeNode(t)
	newGossipLog(t, node, 2)
	out := mustRun(t, node, "tail heartbeat -n 3")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out)
	}
	calls := node.callsTo("tenzro_tailGossip")
	want := []string{
		`{"topic":"heartbeat","after":0,"limit":0}`,
		`{"topic":"heartbeat","after":7,"limit":3,"wait_ms":10000}`,
		`{"topic":"heartbeat","after":9,"limit":1,"wait_ms":10000}`,
	}
	if len(calls) != len(want) {
		t.Fatalf("%d calls, want %d: %+v", len(calls), len(want), calls)
	}
	for i, c := range calls {
		if string(c.Params) != want[i] {
			t.Errorf("call %d params %s, want %s", i, c.Params, want[i])
		}
	}
	for i, want := range [][]string{
		{"12:00:01.123", "accept", "heartbeat", "-", "from", "12D3Ko…w3UERE", "machine=9c0ffee1…", "seq=42",
			"queue=0", "models=ab12cd34…:warm,big:cold", "load=1/4"},
		{"12:00:01.500", "reject", "heartbeat", "unpinned", "(signed", "by", "a", "key", "the", "announcement", "is", "not", "pinned", "to)",
			"from", "12D3Ko…WnErTy", "machine=01234567…", "seq=7", "queue=3", "models=tiny:warming", "load=0/2", "DEGRADED"},
		{"12:00:02.000", "ignore", "announce", "outside", "freshness", "window", "from", "12D3Ko…w3UERE",
			"machine=9c0ffee1…", "model=ab12cd34…", "engine=embedded", "region=EU", "hw=cpu-avx2", "capacity=4"},
	} {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("line %d:\n got %q\nwant %q", i, got, want)
		}
	}
	if strings.Contains(out, "c2lnbmF0dXJl") {
		t.Error("signature printed")
	}
}

func TestTailJSONAndPriceObs(t *testing.T) {
	node := newFakeNode(t)
	g := newGossipLog(t, node, 100)
	out := mustRun(t, node, "tail /tenzro/devnet/price-obs/1 -n 4 --json")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !json.Valid([]byte(lines[3])) || !strings.Contains(lines[3], `"seq":11`) {
		t.Fatalf("json lines:\n%s", out)
	}
	if c := node.callsTo("tenzro_tailGossip"); !strings.Contains(string(c[0].Params), `"topic":"/tenzro/devnet/price-obs/1"`) {
		t.Errorf("topic not passed through: %s", c[0].Params)
	}
	var ev gossipEvent
	_ = json.Unmarshal(g.events[3], &ev)
	want := "price-obs  -  from 12D3Ko…Zy8Xw7  model=ab12cd34… provider=12D3Ko…w3UERE price=1234 latency_ms=87 ok=true"
	if got := formatEvent(ev); !strings.HasSuffix(got, want) {
		t.Errorf("price-obs line %q, want suffix %q", got, want)
	}
}

func TestTailStopsOnCancel(t *testing.T) {
	node := newFakeNode(t)
	g := newGossipLog(t, node, 100)
	g.events = nil
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	var out strings.Builder
	go func() { done <- Run(ctx, Config{API: node.srv.URL, Out: &out, Err: &out}, "tail heartbeat") }()
	<-g.polling
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("tail did not stop on cancel")
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}

func TestTailBadCount(t *testing.T) {
	node := newFakeNode(t)
	newGossipLog(t, node, 100)
	for line, want := range map[string]string{
		"tail heartbeat -n -2":  "want a positive count",
		"tail heartbeat -n two": `-n "two": not an integer`,
	} {
		if _, err := runCmd(t, node, line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", line, err)
		}
	}
}

func TestSummarizeOddMessages(t *testing.T) {
	for raw, want := range map[string]string{
		``:       "",
		`null`:   "",
		`[1, 2]`: "[1,2]",
		`{"zeta": "z", "alpha": 1, "nested": {"x": 1}}`: "alpha=1 zeta=z",
		`{"in_flight": 2}`:                          "load=2/?",
		`{"states": ["a", "b"]}`:                    "models=a,b",
		`{"k": "` + strings.Repeat("x", 300) + `"}`: "k=" + strings.Repeat("x", maxSummary-3) + "…",
	} {
		if got := summarizeMessage(json.RawMessage(raw)); got != want {
			t.Errorf("summarize %.40s = %q, want %q", raw, got, want)
		}
	}
	if got := topicShortName("custom-topic"); got != "custom-topic" {
		t.Errorf("short name %q", got)
	}
}
