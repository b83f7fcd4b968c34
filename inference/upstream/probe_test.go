package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// engine is an OpenAI-compatible server outside the system: chat and
// text completions each answer one token, refuse, or fail.
type engine struct {
	chat, text, prefix int // HTTP status for each form; 200 answers
	calls              atomic.Int32
}

func (e *engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.calls.Add(1)
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	status := e.text
	if r.URL.Path == "/v1/chat/completions" {
		status = e.chat
		if body["continue_final_message"] == true {
			status = e.prefix
		}
	}
	if status != http.StatusOK {
		w.WriteHeader(status)
		_, _ = fmt.Fprint(w, `{"error":{"message":"no","type":"invalid_request_error"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"!\",\"delta\":{\"content\":\"!\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
}

func TestProbeContinuation(t *testing.T) {
	const ok, bad, missing, down = http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusServiceUnavailable
	cases := []struct {
		name         string
		e            *engine
		want, got    string
		inconclusive bool
		calls        int32
	}{
		{"vLLM continues an assistant prefix", &engine{chat: ok, text: ok, prefix: ok}, ContinueAssistantPrefix, ContinueAssistantPrefix, false, 1},
		{"prefix refused, text completions serve", &engine{chat: ok, text: ok, prefix: bad}, ContinueAssistantPrefix, ContinueRawPrompt, false, 2},
		{"chat only, prefix refused", &engine{chat: ok, text: missing, prefix: 422}, ContinueAssistantPrefix, ContinueNone, false, 2},
		{"raw asked, raw refused", &engine{chat: ok, text: missing, prefix: ok}, ContinueRawPrompt, ContinueNone, false, 1},
		{"none is never probed", &engine{chat: ok, text: ok, prefix: ok}, ContinueNone, ContinueNone, false, 0},
		{"a busy engine downgrades nothing", &engine{chat: ok, text: ok, prefix: down}, ContinueAssistantPrefix, ContinueAssistantPrefix, true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.e)
			defer srv.Close()
			c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ProbeContinuation(context.Background(), tc.want)
			if got != tc.got || (err != nil) != tc.inconclusive {
				t.Fatalf("probe(%s) = %q, %v; want %q, inconclusive %v", tc.want, got, err, tc.got, tc.inconclusive)
			}
			if n := tc.e.calls.Load(); n != tc.calls {
				t.Fatalf("the engine saw %d requests, want %d", n, tc.calls)
			}
		})
	}
}

func TestProbeContinuationRefusesUnknownMode(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ProbeContinuation(context.Background(), "prefill"); err == nil {
		t.Fatal("an unknown mode was probed")
	}
}
