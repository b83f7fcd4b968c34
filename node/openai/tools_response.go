package openai

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// An answer constrained to a tool call (tool_choice "required" or a named
// function) is the compact JSON {"name":"f","arguments":{...}}
// (inference/grammar): the buyer gets it as OpenAI's assistant tool_calls
// with finish_reason "tool_calls". Under tool_choice "auto" a whole answer
// of that form calling a declared function is read the same way when not
// streamed; a streamed one goes out as text.

const finishToolCalls = "tool_calls"

type toolFunctionOut struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type toolCallOut struct {
	Index    *int            `json:"index,omitempty"` // in stream deltas only
	ID       string          `json:"id,omitempty"`
	Type     string          `json:"type,omitempty"`
	Function toolFunctionOut `json:"function"`
}

type toolCallMessage struct {
	Role      string        `json:"role"`
	Content   *string       `json:"content"` // null, as OpenAI sends it with tool calls
	ToolCalls []toolCallOut `json:"tool_calls"`
}

type toolCallChoice struct {
	Index        int              `json:"index"`
	Message      toolCallMessage  `json:"message"`
	LogProbs     *logProbsContent `json:"logprobs"`
	FinishReason string           `json:"finish_reason"`
}

// forcedCall reports whether the answer is constrained to a tool call.
func forcedCall(s terms.Sampling) bool {
	return len(s.Tools) > 0 && (s.ToolChoice == terms.ToolChoiceRequired || s.ToolChoice == terms.ToolChoiceFunction)
}

// callID is the ID of the answer's only call: derived from the
// completion's ID, so that the call and its answer are named alike.
func callID(completionID string) string { return "call_" + completionID }

// toolCallOf reads text as a call to a function s declares.
func toolCallOf(s terms.Sampling, text string) (name, args string, ok bool) {
	if len(s.Tools) == 0 || s.ToolChoice == terms.ToolChoiceNone {
		return "", "", false
	}
	var call struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal([]byte(text), &call) != nil || call.Name == nil || len(call.Arguments) == 0 || call.Arguments[0] != '{' {
		return "", "", false
	}
	if !slices.ContainsFunc(s.Tools, func(t terms.Tool) bool { return t.Name == *call.Name }) {
		return "", "", false
	}
	return *call.Name, string(call.Arguments), true
}

// toolCallBody is the choice of a chat answer that is a tool call.
func toolCallBody(req *Request, res *Result, id string) ([]toolCallChoice, bool) {
	name, args, ok := toolCallOf(req.Sampling, res.Text)
	if !ok {
		return nil, false
	}
	c := toolCallChoice{FinishReason: finishToolCalls, Message: toolCallMessage{Role: "assistant",
		ToolCalls: []toolCallOut{{ID: callID(id), Type: "function", Function: toolFunctionOut{Name: name, Arguments: args}}}}}
	if req.TopLogProbs > 0 {
		c.LogProbs = &logProbsContent{Content: res.LogProbs}
	}
	return []toolCallChoice{c}, true
}

// callStream turns the streamed text of a forced call into OpenAI's
// tool-call deltas: the first names the call, the rest carry fragments of
// its arguments. The last byte is held back, as the wrapper's closing
// brace comes last and is not part of the arguments.
type callStream struct {
	id      string
	buf     []byte
	started bool
}

var callHead = []byte(`{"name":`)

func (c *callStream) push(text string) []toolCallOut {
	c.buf = append(c.buf, text...)
	zero := 0
	var out []toolCallOut
	if !c.started {
		name, rest, ok := splitCallHead(c.buf)
		if !ok {
			return nil
		}
		c.started, c.buf = true, rest
		out = append(out, toolCallOut{Index: &zero, ID: callID(c.id), Type: "function", Function: toolFunctionOut{Name: name}})
	}
	if len(c.buf) > 1 {
		frag := string(c.buf[:len(c.buf)-1])
		c.buf = c.buf[len(c.buf)-1:]
		out = append(out, toolCallOut{Index: &zero, Function: toolFunctionOut{Arguments: frag}})
	}
	return out
}

// splitCallHead reads `{"name":"<name>","arguments":` off b.
func splitCallHead(b []byte) (name string, rest []byte, ok bool) {
	if !bytes.HasPrefix(b, callHead) {
		return "", nil, false
	}
	s := b[len(callHead):]
	end := 1
	for ; end < len(s) && s[end] != '"'; end++ {
		if s[end] == '\\' {
			end++
		}
	}
	const argsKey = `,"arguments":`
	if end >= len(s) || !bytes.HasPrefix(s[end+1:], []byte(argsKey)) {
		return "", nil, false
	}
	if json.Unmarshal(s[:end+1], &name) != nil {
		return "", nil, false
	}
	return name, s[end+1+len(argsKey):], true
}
