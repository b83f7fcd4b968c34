package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// parseMessages reads each message strictly (terms.ParseMessage): content
// as a string or parts, tool calls and tool answers; an error is a 400
// whose param names the message and field ("messages[1].content[0].type").
func parseMessages(raws []json.RawMessage) ([]inference.Message, *Error) {
	msgs := make([]inference.Message, len(raws))
	for i, raw := range raws {
		m, err := terms.ParseMessage(raw)
		if err != nil {
			param := fmt.Sprintf("messages[%d]", i)
			if f := terms.FieldOf(err); f != "" {
				param += "." + f
			}
			return nil, BadRequest(param, "messages[%d].%v", i, err)
		}
		// No provider announces image or audio input yet, and the
		// embedded engine reads text only: a media part is refused here,
		// naming it, rather than routed to be refused (or ignored) later.
		if j, typ := m.NonText(); j >= 0 {
			return nil, BadRequest(fmt.Sprintf("messages[%d].content[%d]", i, j),
				"messages[%d].content[%d]: %s parts are not supported: no provider of this network announces %s input", i, j, typ, media(typ))
		}
		msgs[i] = m
	}
	return msgs, nil
}

func media(partType string) string {
	if partType == terms.PartInputAudio {
		return "audio"
	}
	return "image"
}

// toolFields are the request fields of tool calling and structured
// output, read into the request's Sampling by applyTools (tools.go).
type toolFields struct {
	Tools             json.RawMessage `json:"tools,omitempty"`
	ToolChoice        json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls json.RawMessage `json:"parallel_tool_calls,omitempty"`
	ResponseFormat    json.RawMessage `json:"response_format,omitempty"`
	Functions         json.RawMessage `json:"functions,omitempty"`
	FunctionCall      json.RawMessage `json:"function_call,omitempty"`
}

// compact is raw without insignificant whitespace ("" when not JSON).
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return ""
	}
	return b.String()
}
