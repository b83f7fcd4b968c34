package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestMessagesReachTheEngineInOpenAIShape: content parts, an assistant
// turn that only calls tools and the tool's answer reach an
// OpenAI-compatible server exactly in OpenAI's shape, field by field.
func TestMessagesReachTheEngineInOpenAIShape(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got = body.Messages
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []inference.Message{
		{Role: "system", Content: "be brief", Name: "ops"},
		{Role: "user", Parts: []terms.ContentPart{
			{Type: terms.PartText, Text: "what is in "},
			{Type: terms.PartImageURL, URL: "https://example.com/a.png", Detail: "low"},
			{Type: terms.PartInputAudio, Data: "AAAA", Format: "wav"},
		}},
		{Role: "assistant", ToolCalls: []terms.ToolCall{{ID: "call_1", Name: "look", Arguments: `{"at":"a.png"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: "a cat"},
	}
	res, err := c.Complete(context.Background(), &Request{Chat: true, Messages: msgs, Sampling: inference.Sampling{MaxTokens: 4}}, func(Delta) error { return nil })
	if err != nil || res.Text != "ok" {
		t.Fatalf("complete: %+v, %v", res, err)
	}
	const want = `[{"role":"system","content":"be brief","name":"ops"},` +
		`{"role":"user","content":[{"type":"text","text":"what is in "},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"low"}},` +
		`{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"look","arguments":"{\"at\":\"a.png\"}"}}]},` +
		`{"role":"tool","content":"a cat","tool_call_id":"call_1"}]`
	if string(got) != want {
		t.Fatalf("the engine got messages\n%s\nwant\n%s", got, want)
	}
	// What the engine got reads back as what was sent.
	var back []inference.Message
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, msgs) {
		t.Fatalf("the messages read back as %+v, sent %+v", back, msgs)
	}
}
