package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// captureBackend is echoBackend that keeps the last request it got.
type captureBackend struct {
	echoBackend
	got **Request
}

func (b captureBackend) Complete(ctx context.Context, req *Request, onDelta func(Delta) error) (*Result, error) {
	*b.got = req
	return b.echoBackend.Complete(ctx, req, onDelta)
}

// TestToolFieldsAreCarried: tools, tool_choice, parallel_tool_calls and
// response_format reach the backend in the sampling terms, schemas
// compacted (the form the request digest commits to); their empty forms
// leave a plain request's terms.
func TestToolFieldsAreCarried(t *testing.T) {
	var got *Request
	mux := http.NewServeMux()
	NewHandler(captureBackend{echoBackend{t}, &got}).Register(mux)
	const msg = `"messages":[{"role":"user","content":"hi"}]`
	const tool = `"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{ "type": "object" },"strict":true}},{"type":"function","function":{"name":"g"}}]`
	for _, c := range []struct {
		body  string
		check func(s terms.Sampling) bool
	}{
		{`{"model":"m",` + msg + `,` + tool + `}`, func(s terms.Sampling) bool {
			return len(s.Tools) == 2 && s.Tools[0].Name == "f" && s.Tools[0].Description == "d" && string(s.Tools[0].Parameters) == `{"type":"object"}` &&
				s.Tools[0].Strict && s.Tools[1].Name == "g" && s.Tools[1].Parameters == nil && s.ToolChoice == "" && !s.NoParallelToolCalls
		}},
		{`{"model":"m",` + msg + `,` + tool + `,"tool_choice":"required","parallel_tool_calls":false}`, func(s terms.Sampling) bool {
			return s.ToolChoice == terms.ToolChoiceRequired && s.NoParallelToolCalls
		}},
		{`{"model":"m",` + msg + `,` + tool + `,"tool_choice":{"type":"function","function":{"name":"g"}}}`, func(s terms.Sampling) bool {
			return s.ToolChoice == terms.ToolChoiceFunction && s.ToolName == "g"
		}},
		{`{"model":"m",` + msg + `,"response_format":{"type":"json_object"}}`, func(s terms.Sampling) bool {
			return s.Format != nil && s.Format.Type == terms.FormatJSONObject && s.Format.Name == "" && s.Format.Schema == nil && !s.Format.Strict
		}},
		{`{"model":"m",` + msg + `,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{ "type" : "array" },"strict":true}}}`, func(s terms.Sampling) bool {
			return s.Format != nil && s.Format.Type == terms.FormatJSONSchema && s.Format.Name == "x" && string(s.Format.Schema) == `{"type":"array"}` && s.Format.Strict
		}},
		{`{"model":"m",` + msg + `,"tools":[],"tool_choice":"none","parallel_tool_calls":false,"response_format":{"type":"text"}}`, func(s terms.Sampling) bool {
			return s.Format == nil && s.Tools == nil && s.ToolChoice == "" && !s.NoParallelToolCalls
		}},
	} {
		got = nil
		if code, e := post(t, mux, c.body); code != http.StatusOK || got == nil || !c.check(got.Sampling) {
			t.Errorf("%s: %d %+v; the backend got %+v", c.body, code, e, got)
		}
	}
}

// FuzzToolFields: hostile tools, tool_choice, parallel_tool_calls and
// response_format never panic, and whatever is accepted is canonical
// (terms' own checks pass), so gateway and provider commit alike.
func FuzzToolFields(f *testing.F) {
	f.Add([]byte(`[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`), []byte(`"required"`), []byte(`false`),
		[]byte(`{"type":"json_schema","json_schema":{"name":"x","schema":{"$ref":"#/$defs/a","$defs":{"a":{"type":"null"}}}}}`))
	f.Add([]byte(`null`), []byte(`{"type":"function","function":{"name":"f"}}`), []byte(`true`), []byte(`{"type":"json_object"}`))
	f.Add([]byte(`[{"type":"function","function":{"name":"f","parameters":{"$ref":"http://x/y"}}}]`), []byte(`"none"`), []byte(`1`), []byte(`{"type":"text"}`))
	f.Fuzz(func(t *testing.T, tools, choice, parallel, format []byte) {
		tf := toolFields{Tools: tools, ToolChoice: choice, ParallelToolCalls: parallel, ResponseFormat: format}
		var s terms.Sampling
		if tf.applyTools(&s) != nil {
			return
		}
		if s.Format != nil {
			if err := s.Format.Check(); err != nil {
				t.Fatalf("accepted a format that is not canonical: %v", err)
			}
		}
		for _, tl := range s.Tools {
			if err := tl.Check(); err != nil {
				t.Fatalf("accepted a tool that is not canonical: %v", err)
			}
		}
		if (s.ToolChoice != "" || s.NoParallelToolCalls) && len(s.Tools) == 0 {
			t.Fatalf("a tool choice without tools: %+v", s)
		}
	})
}

// FuzzCallStream: a provider's streamed text, cut anywhere, never panics
// the tool-call streamer; when the text is a call, the deltas name it
// once and their argument fragments spell exactly its arguments.
// (The streamer serves forced calls, which the grammar makes compact.)
func FuzzCallStream(f *testing.F) {
	f.Add(`{"name":"f","arguments":{"a":[1,"}"]}}`, uint8(3))
	f.Add(`{"name":"we\"ird","arguments":{}}`, uint8(1))
	f.Add(`{"name":`, uint8(0))
	f.Add(`not a call`, uint8(2))
	f.Fuzz(func(t *testing.T, text string, cut uint8) {
		c := &callStream{id: "x"}
		var names []string
		var args string
		step := int(cut%7) + 1
		for i := 0; i < len(text); i += step {
			for _, d := range c.push(text[i:min(i+step, len(text))]) {
				if d.Function.Name != "" {
					names = append(names, d.Function.Name)
				}
				args += d.Function.Arguments
			}
		}
		name, want, ok := toolCallOf(terms.Sampling{Tools: []terms.Tool{{Name: "f"}, {Name: `we"ird`}}}, text)
		// The streamer reads the form a constrained call takes: compact,
		// name first, nothing after.
		quoted, _ := json.Marshal(name)
		compactCall := ok && text == `{"name":`+string(quoted)+`,"arguments":`+want+`}`
		if compactCall && (len(names) != 1 || names[0] != name || args != want) {
			t.Fatalf("%q: names %v, arguments %q; want %q %q", text, names, args, name, want)
		}
	})
}
