package receipt

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestInputCommitmentCoversFormatAndTools: the golden request still
// commits as before, and every response-format and tool field moves the
// commitment.
func TestInputCommitmentCoversFormatAndTools(t *testing.T) {
	plain := testInput().commit()
	if got := hex.EncodeToString(plain[:]); got != goldenInput {
		t.Fatalf("commitment of the plain test request changed: %s", got)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	withSchema := func(in *input) {
		in.s.Format = &terms.ResponseFormat{Type: terms.FormatJSONSchema, Name: "x", Schema: schema}
	}
	withTool := func(in *input) {
		in.s.Tools = []terms.Tool{{Name: "f", Parameters: schema}}
	}
	seen := map[[32]byte]string{plain: "plain"}
	for name, mut := range map[string]func(*input){
		"json_object": func(in *input) { in.s.Format = &terms.ResponseFormat{Type: terms.FormatJSONObject} },
		"json_schema": withSchema,
		"schema name": func(in *input) { withSchema(in); in.s.Format.Name = "y" },
		"schema":      func(in *input) { withSchema(in); in.s.Format.Schema = json.RawMessage(`{"type":"array"}`) },
		"strict":      func(in *input) { withSchema(in); in.s.Format.Strict = true },
		"tool":        withTool,
		"tool name":   func(in *input) { withTool(in); in.s.Tools[0].Name = "g" },
		"tool params": func(in *input) { withTool(in); in.s.Tools[0].Parameters = json.RawMessage(`{}`) },
		"tool desc":   func(in *input) { withTool(in); in.s.Tools[0].Description = "d" },
		"tool strict": func(in *input) { withTool(in); in.s.Tools[0].Strict = true },
		"two tools":   func(in *input) { withTool(in); in.s.Tools = append(in.s.Tools, terms.Tool{Name: "g"}) },
		"required":    func(in *input) { withTool(in); in.s.ToolChoice = terms.ToolChoiceRequired },
		"named":       func(in *input) { withTool(in); in.s.ToolChoice, in.s.ToolName = terms.ToolChoiceFunction, "f" },
		"no parallel": func(in *input) { withTool(in); in.s.NoParallelToolCalls = true },
		"choice none": func(in *input) { in.s.ToolChoice = terms.ToolChoiceNone },
	} {
		in := testInput()
		mut(&in)
		c := in.commit()
		if prev, dup := seen[c]; dup {
			t.Errorf("%s commits like %s", name, prev)
		}
		seen[c] = name
	}
}
