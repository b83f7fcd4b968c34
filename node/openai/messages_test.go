package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// engineBackend serves requests from an embedded engine, keeping the
// prompt tokens each request was run on.
type engineBackend struct {
	e       *llm.Engine
	mu      sync.Mutex
	prompts [][]int
}

func (*engineBackend) Models(context.Context) []Model { return []Model{{ID: "m", Object: "model"}} }

func (b *engineBackend) Complete(ctx context.Context, req *Request, onDelta func(Delta) error) (*Result, error) {
	res, err := b.e.Generate(ctx, inference.GenerateRequest{Messages: req.Messages, Sampling: req.Sampling}, func(t inference.Token) error {
		return onDelta(Delta{Text: t.Text})
	})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.prompts = append(b.prompts, res.Prompt)
	b.mu.Unlock()
	return &Result{Model: req.Model, Text: res.Text, FinishReason: res.FinishReason,
		Usage: Usage{PromptTokens: len(res.Prompt), CompletionTokens: len(res.Tokens), TotalTokens: len(res.Prompt) + len(res.Tokens)}}, nil
}

func post(t *testing.T, mux *http.ServeMux, body string) (int, Error) {
	t.Helper()
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
	var got struct{ Error Error }
	if rec.Code != http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
		}
	}
	return rec.Code, got.Error
}

// TestContentPartsReachTheEngineAsTheirText: a message given as text
// parts runs on exactly the prompt tokens of the same text given as a
// string, on a generated model rendered by its own chat template; a tool
// call and the tool's answer reach the template too.
func TestContentPartsReachTheEngineAsTheirText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	o := modelgen.DevnetOptions()
	o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 2, 64, 4, 2, 128, 600, 512
	if err := modelgen.GenerateModel(dir, o); err != nil {
		t.Fatal(err)
	}
	e, err := llm.Open(dir, llm.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := &engineBackend{e: e}
	mux := http.NewServeMux()
	NewHandler(b).Register(mux)
	const sys = `{"role":"system","content":"be brief"}`
	for _, body := range []string{
		`{"model":"m","max_tokens":1,"temperature":0,"messages":[` + sys + `,{"role":"user","content":"hello there"}]}`,
		`{"model":"m","max_tokens":1,"temperature":0,"messages":[` + sys + `,{"role":"user","content":[{"type":"text","text":"hello there"}]}]}`,
		`{"model":"m","max_tokens":1,"temperature":0,"messages":[` + sys + `,{"role":"user","content":[{"type":"text","text":"hel"},{"type":"text","text":"lo "},{"type":"text","text":"there"}]}]}`,
		`{"model":"m","max_tokens":1,"temperature":0,"messages":[{"role":"system","content":[{"type":"text","text":"be brief"}]},{"role":"user","content":"hello there"}]}`,
	} {
		if code, e := post(t, mux, body); code != http.StatusOK {
			t.Fatalf("%s: %d %+v", body, code, e)
		}
	}
	for i, p := range b.prompts[1:] {
		if !slices.Equal(p, b.prompts[0]) {
			t.Fatalf("request %d ran on prompt %v, the string form on %v", i+1, p, b.prompts[0])
		}
	}
	calls := `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"forty-two"}]}`
	if code, e := post(t, mux, calls); code != http.StatusOK {
		t.Fatalf("a tool-calling conversation: %d %+v", code, e)
	}
	if got := e.Detokenize(b.prompts[len(b.prompts)-1]); !strings.Contains(got, "tool\nforty-two\n") {
		t.Fatalf("the tool's answer is not in the prompt %q", got)
	}
}

// TestUnservedFieldsAreRefusedByName: media parts, the deprecated
// functions, and malformed tool calling and structured output are
// answered 400 naming the field (or the part) before any backend is
// asked, rather than answered as plain text and billed; the empty forms
// of tools and response_format ask for nothing and pass.
func TestUnservedFieldsAreRefusedByName(t *testing.T) {
	mux := http.NewServeMux()
	NewHandler(echoBackend{t}).Register(mux)
	const msg = `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ body, param string }{
		// Served now (tools_test.go), but malformed forms are refused by name.
		{`{"model":"m",` + msg + `,"tools":[{"type":"retrieval"}]}`, "tools[0]"},
		{`{"model":"m",` + msg + `,"tool_choice":"required"}`, "tool_choice"},
		{`{"model":"m",` + msg + `,"tool_choice":{"type":"function","function":{"name":"f"}}}`, "tool_choice"},
		{`{"model":"m",` + msg + `,"response_format":{"type":"yaml"}}`, "response_format.type"},
		{`{"model":"m",` + msg + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":7}}}}`, "response_format.json_schema.schema"},
		{`{"model":"m",` + msg + `,"functions":[{"name":"f"}]}`, "functions"},
		{`{"model":"m",` + msg + `,"function_call":"auto"}`, "function_call"},
		{`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`, "messages[1].content[1]"},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA","format":"wav"}}]}]}`, "messages[0].content[0]"},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{}}]}]}`, "messages[0].content[0]"},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"refusal"}]}]}`, "messages[0].content[0].type"},
		{`{"model":"m","messages":[{"role":"tool","content":"1"}]}`, "messages[0].tool_call_id"},
		{`{"model":"m","messages":[{"role":"user","content":"x","audio":{"id":"a"}}]}`, "messages[0].audio"},
		{`{"model":"m","messages":[{"role":"wizard","content":"hi"}]}`, "messages[0].role"},
	} {
		code, e := post(t, mux, c.body)
		if code != http.StatusBadRequest || e.Param != c.param || !strings.Contains(e.Message, c.param) {
			t.Errorf("%s: %d %+v, want 400 naming %q", c.body, code, e, c.param)
		}
	}
	for _, body := range []string{
		`{"model":"m",` + msg + `,"tools":[],"tool_choice":"none","parallel_tool_calls":false,"response_format":{"type":"text"}}`,
		`{"model":"m",` + msg + `,"tools":null,"tool_choice":null,"response_format":null}`,
	} {
		if code, e := post(t, mux, body); code != http.StatusOK {
			t.Errorf("%s: %d %+v, want 200", body, code, e)
		}
	}
}
