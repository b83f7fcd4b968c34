package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// echoBackend answers every request with a fixed text, checking on the way
// that what reached it is sane.
type echoBackend struct{ t *testing.T }

func (echoBackend) Models(context.Context) []Model { return []Model{{ID: "m", Object: "model"}} }

func (b echoBackend) Complete(_ context.Context, req *Request, onDelta func(Delta) error) (*Result, error) {
	if req.Sampling.MaxTokens < 0 || req.TopLogProbs < 0 || req.TopLogProbs > maxTopLogProbs {
		b.t.Fatalf("the backend got an out-of-range request: %+v", req)
	}
	if req.Chat != (len(req.Messages) > 0) || req.Chat && req.Prompt != "" {
		b.t.Fatalf("chat %v with prompt %q and %d messages", req.Chat, req.Prompt, len(req.Messages))
	}
	if err := onDelta(Delta{Text: "ok"}); err != nil {
		return nil, err
	}
	return &Result{Model: req.Model, Text: "ok", FinishReason: "stop", Usage: Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}}, nil
}

// FuzzRoutes posts arbitrary bodies to both completion routes: every
// answer is a 200 (JSON or an SSE stream ending in [DONE]) or a 4xx with
// an OpenAI error object — never a 5xx, never a panic.
func FuzzRoutes(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":30}`,
		`{"model":"m","prompt":["a","b"],"stop":"x","logprobs":2}`,
		`{"model":"m","prompt":"a","temperature":-1}`,
		`{"model":"m","messages":[],"n":2}`,
		`{"model":"","messages":[{"role":"wizard","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"tenzro":{"strategy":"price"}}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"h"},{"type":"text","text":"i"}]}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]}`,
		`{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto"}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"text"},"tool_choice":"none","tools":[]}`,
		`[1,2,3]`, `{`, ``,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, completions bool) {
		mux := http.NewServeMux()
		NewHandler(echoBackend{t}).Register(mux)
		path := "/v1/chat/completions"
		if completions {
			path = "/v1/completions"
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
		out := rec.Body.String()
		switch {
		case rec.Code == http.StatusOK && strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
			if !strings.HasSuffix(out, "data: [DONE]\n\n") {
				t.Fatalf("stream without [DONE]: %q", out)
			}
		case rec.Code == http.StatusOK:
			var v map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || v["choices"] == nil {
				t.Fatalf("200 with body %q", out)
			}
		case rec.Code >= 400 && rec.Code < 500:
			var e struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" || !utf8.ValidString(e.Error.Message) {
				t.Fatalf("%d with body %q", rec.Code, out)
			}
		default:
			t.Fatalf("status %d for %q: %q", rec.Code, body, out)
		}
	})
}
