package llm

import (
	"errors"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestMessagesReachTheTemplate: an assistant turn's tool calls (arguments
// as the JSON object they hold, or as the string when they hold none), a
// tool's answer with its call ID and name, and text parts joined reach
// the chat template; a media part is refused naming it.
func TestMessagesReachTheTemplate(t *testing.T) {
	tmpl, err := CompileChatTemplate(`{% for m in messages %}[{{ m.role }}|{{ m.content }}` +
		`{% if m.tool_calls %}{% for c in m.tool_calls %}<{{ c.id }}:{{ c.function.name }}{{ c.function.arguments | tojson }}>{% endfor %}{% endif %}` +
		`{% if m.tool_call_id %}@{{ m.tool_call_id }}/{{ m.name }}{% endif %}]{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	in, err := chatInputOf([]inference.Message{
		{Role: "user", Parts: []terms.ContentPart{{Type: terms.PartText, Text: "a"}, {Type: terms.PartText, Text: "b"}}},
		{Role: "assistant", ToolCalls: []terms.ToolCall{{ID: "c1", Name: "f", Arguments: `{"x": 1}`}, {ID: "c2", Name: "g", Arguments: "not json"}}},
		{Role: "tool", ToolCallID: "c1", Name: "f", Content: "2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(in, "", "")
	if err != nil {
		t.Fatal(err)
	}
	const want = `[user|ab][assistant|<c1:f{"x": 1}><c2:g"not json">][tool|2@c1/f]`
	if got != want {
		t.Fatalf("rendered %q, want %q", got, want)
	}
	_, err = chatInputOf([]inference.Message{{Role: "user", Parts: []terms.ContentPart{{Type: terms.PartText, Text: "a"}, {Type: terms.PartImageURL, URL: "u"}}}})
	var pe *UnsupportedPartError
	if !errors.As(err, &pe) || pe.Message != 0 || pe.Part != 1 || pe.Type != terms.PartImageURL {
		t.Fatalf("an image part: %v", err)
	}
}
