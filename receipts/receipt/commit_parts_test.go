package receipt

import (
	"testing"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// partsInput is a request whose messages use every field beyond role and
// content: parts of each type, a name, an assistant turn's tool calls and
// a tool's answer.
func partsInput() input {
	in := testInput()
	in.msgs = []terms.Message{
		{Role: "system", Content: "be brief", Name: "ops"},
		{Role: "user", Parts: []terms.ContentPart{
			{Type: terms.PartText, Text: "ab"},
			{Type: terms.PartText, Text: "c"},
			{Type: terms.PartImageURL, URL: "https://example.com/a.png", Detail: "low"},
			{Type: terms.PartInputAudio, Data: "AAAA", Format: "wav"},
		}},
		{Role: "assistant", ToolCalls: []terms.ToolCall{
			{ID: "call_1", Name: "look", Arguments: `{"at":1}`},
			{ID: "call_2", Name: "look", Arguments: `{"at":2}`},
		}},
		{Role: "tool", ToolCallID: "call_1", Content: "a cat"},
	}
	return in
}

// TestCommitmentCoversPartsAndToolCalls takes an attacker's view: every
// change to what the model sees — parts reordered, text moved between
// parts, a part's type or field, the string form for the parts form, a
// tool call's ID, name, arguments or order, a tool answer's call ID, a
// name — commits differently.
func TestCommitmentCoversPartsAndToolCalls(t *testing.T) {
	user := func(in *input) []terms.ContentPart { return in.msgs[1].Parts }
	calls := func(in *input) []terms.ToolCall { return in.msgs[2].ToolCalls }
	variants := map[string]func(*input){
		"parts reordered":          func(in *input) { p := user(in); p[0], p[1] = p[1], p[0] },
		"text moved between parts": func(in *input) { p := user(in); p[0].Text, p[1].Text = "a", "bc" },
		"parts merged": func(in *input) {
			in.msgs[1].Parts = append([]terms.ContentPart{{Type: terms.PartText, Text: "abc"}}, user(in)[2:]...)
		},
		"string for text parts": func(in *input) { in.msgs[1].Parts, in.msgs[1].Content = nil, "abc" },
		"part text":             func(in *input) { user(in)[1].Text = "d" },
		"image url":             func(in *input) { user(in)[2].URL = "https://example.com/b.png" },
		"image detail":          func(in *input) { user(in)[2].Detail = "high" },
		"image detail dropped":  func(in *input) { user(in)[2].Detail = "" },
		"audio data":            func(in *input) { user(in)[3].Data = "AAAB" },
		"audio format":          func(in *input) { user(in)[3].Format = "mp3" },
		"media reordered":       func(in *input) { p := user(in); p[2], p[3] = p[3], p[2] },
		"tool call id":          func(in *input) { calls(in)[0].ID = "call_3" },
		"tool call name":        func(in *input) { calls(in)[0].Name = "peek" },
		"tool call arguments":   func(in *input) { calls(in)[0].Arguments = `{"at": 1}` },
		"tool calls reordered":  func(in *input) { c := calls(in); c[0], c[1] = c[1], c[0] },
		"tool call dropped":     func(in *input) { in.msgs[2].ToolCalls = calls(in)[:1] },
		"tool answer's call id": func(in *input) { in.msgs[3].ToolCallID = "call_2" },
		"name":                  func(in *input) { in.msgs[0].Name = "dev" },
		"name dropped":          func(in *input) { in.msgs[0].Name = "" },
		"content beside calls":  func(in *input) { in.msgs[2].Content = "looking" },
		"argument moved to id":  func(in *input) { calls(in)[0].ID, calls(in)[0].Arguments = `call_1{"at":1}`, "" },
	}
	distinctCommits(t, partsInput, variants)
	if a, b := partsInput(), partsInput(); a.commit() != b.commit() {
		t.Error("the same request commits differently twice")
	}
}

// distinctCommits checks that base and each variant of it commit
// pairwise differently.
func distinctCommits(t *testing.T, base func() input, variants map[string]func(*input)) {
	t.Helper()
	seen := map[[32]byte]string{base().commit(): "base"}
	for name, v := range variants {
		in := base()
		v(&in)
		got := in.commit()
		if prev, dup := seen[got]; dup {
			t.Errorf("%s commits the same as %s", name, prev)
		}
		seen[got] = name
	}
}
