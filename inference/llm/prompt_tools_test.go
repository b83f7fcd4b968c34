package llm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestToolsReachThePrompt: a request's tools are rendered by the model's
// template (Qwen3's <tools> block, in OpenAI's shape) and, for a model
// without one, described in the ChatML system message; without tools the
// prompt is what it was.
func TestToolsReachThePrompt(t *testing.T) {
	tok, _ := chatFixture(t)
	tools := []terms.Tool{{Name: "weather", Description: "Forecast.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	msgs := []inference.Message{{Role: "user", Content: "rain?"}}
	want := `{"function":{"description":"Forecast.","name":"weather","parameters":{"type":"object"}},"type":"function"}`
	for _, tmpl := range []*ChatTemplate{loadTemplate(t, "qwen3.jinja"), nil} {
		plain, err := encodeChatInput(tok, tmpl, msgs, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := encodeChatInput(tok, tmpl, msgs, tools)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(strings.ReplaceAll(tok.Decode(ids), " ", ""), "\n", "")
		if !strings.Contains(text, strings.ReplaceAll(want, " ", "")) || !strings.Contains(text, "<tools>") {
			t.Errorf("template %v: the tool is not in the prompt %q", tmpl != nil, tok.Decode(ids))
		}
		if strings.Contains(tok.Decode(plain), "weather") {
			t.Errorf("template %v: a prompt without tools mentions one", tmpl != nil)
		}
	}
}
