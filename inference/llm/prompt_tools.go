package llm

import (
	"encoding/json"
	"strings"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// toolsJSON is the request's tools as a chat template reads them:
// OpenAI's shape, {"type":"function","function":{name, description,
// parameters}}, as llama.cpp gives them to templates.
func toolsJSON(tools []terms.Tool) []json.RawMessage {
	out := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		fn := map[string]any{"name": t.Name}
		if t.Description != "" {
			fn["description"] = t.Description
		}
		if len(t.Parameters) > 0 {
			fn["parameters"] = t.Parameters
		}
		b, _ := json.Marshal(map[string]any{"type": "function", "function": fn}) //nolint:errcheck // strings and valid JSON always encode
		out[i] = b
	}
	return out
}

// withToolsSystem is msgs with the tools described in the system message
// (a new one first when there is none), for a model without a chat
// template: native ChatML has no place for tools, and a model must see
// the functions it may call. The description follows the Hermes
// convention that ChatML-trained models know.
func withToolsSystem(msgs []inference.Message, tools []terms.Tool) []inference.Message {
	if len(tools) == 0 {
		return msgs
	}
	var b strings.Builder
	b.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
	for _, t := range toolsJSON(tools) {
		b.WriteByte('\n')
		b.Write(t)
	}
	b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments: " +
		`{"name": <function-name>, "arguments": <args-json-object>}`)
	out := append([]inference.Message(nil), msgs...)
	if len(out) > 0 && out[0].Role == "system" {
		out[0].Content += "\n\n" + b.String()
		return out
	}
	return append([]inference.Message{{Role: "system", Content: b.String()}}, out...)
}

// chatMLToolCalls writes an assistant message's calls after its content
// for a model without a chat template, in the Hermes <tool_call> form
// its system message describes.
func chatMLToolCalls(calls []ToolCall) string {
	var b strings.Builder
	for _, c := range calls {
		name, _ := json.Marshal(c.Name) //nolint:errcheck // a string always encodes
		b.WriteString("\n<tool_call>\n{\"name\": ")
		b.Write(name)
		b.WriteString(", \"arguments\": ")
		b.Write(c.Arguments)
		b.WriteString("}\n</tool_call>")
	}
	return b.String()
}
