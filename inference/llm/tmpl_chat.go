package llm

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ardanlabs/jinja"
)

// ChatTemplate is a model's tokenizer.chat_template compiled for a Jinja
// engine (github.com/ardanlabs/jinja: pure Go, written for the templates
// GGUF files carry, with the Python string methods, tojson, namespace and
// raise_exception those use). A compiled template is safe for concurrent
// use.
type ChatTemplate struct {
	src  string
	tmpl *jinja.Template
}

// ChatMessage is one message as chat templates see it.
type ChatMessage struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"` // an assistant turn's reasoning (Qwen3)
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`        // an assistant turn's calls
	ToolCallID       string     `json:"tool_call_id,omitempty"`      // a tool turn's answer to this call
	Name             string     `json:"name,omitempty"`              // a tool turn's tool name
}

// ToolCall is a function call an assistant turn made.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON object, or a JSON string holding one
}

// ChatInput is what a template renders: the conversation, the tools the
// model may call (each a JSON object, as OpenAI's tools field carries
// them; key order is kept, as templates print them with tojson), whether
// to open the assistant turn, and extra template variables (for example
// enable_thinking).
type ChatInput struct {
	Messages            []ChatMessage     `json:"messages"`
	Tools               []json.RawMessage `json:"tools,omitempty"`
	AddGenerationPrompt bool              `json:"add_generation_prompt"`
	Extra               map[string]any    `json:"extra,omitempty"`
}

// CompileChatTemplate compiles Jinja template source.
func CompileChatTemplate(src string) (*ChatTemplate, error) {
	t, err := jinja.Compile(rewriteTojsonIndent(src))
	if err != nil {
		return nil, fmt.Errorf("llm: chat template: %w", err)
	}
	return &ChatTemplate{src: src, tmpl: t}, nil
}

// Source returns the template's Jinja source.
func (c *ChatTemplate) Source() string { return c.src }

// Render renders in as the template does, with bos and eos as bos_token
// and eos_token. The text is what the template prints; EncodeTemplate is
// what turns a conversation into tokens.
func (c *ChatTemplate) Render(in ChatInput, bos, eos string) (string, error) {
	return c.render(in, bos, eos, func(s string) string { return s })
}

func (c *ChatTemplate) render(in ChatInput, bos, eos string, str func(string) string) (string, error) {
	msgs := make([]jinja.Value, len(in.Messages))
	for i, m := range in.Messages {
		if !validRole(m.Role) {
			return "", fmt.Errorf("llm: message %d: invalid role %q", i, m.Role)
		}
		msg := jinja.NewDict()
		d := msg.AsDict()
		d.Set("role", jinja.NewString(m.Role))
		d.Set("content", jinja.NewString(str(m.Content)))
		if m.ReasoningContent != "" {
			d.Set("reasoning_content", jinja.NewString(str(m.ReasoningContent)))
		}
		if m.ToolCallID != "" {
			d.Set("tool_call_id", jinja.NewString(str(m.ToolCallID)))
		}
		if m.Name != "" {
			d.Set("name", jinja.NewString(str(m.Name)))
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]jinja.Value, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				args, err := jsonValue(tc.Arguments, str)
				if err != nil {
					return "", fmt.Errorf("llm: message %d: tool call %d: arguments: %w", i, j, err)
				}
				fn := jinja.NewDict()
				fn.AsDict().Set("name", jinja.NewString(str(tc.Name)))
				fn.AsDict().Set("arguments", args)
				call := jinja.NewDict()
				call.AsDict().Set("id", jinja.NewString(str(tc.ID)))
				call.AsDict().Set("type", jinja.NewString("function"))
				call.AsDict().Set("function", fn)
				calls[j] = call
			}
			d.Set("tool_calls", jinja.NewList(calls))
		}
		msgs[i] = msg
	}
	data := map[string]jinja.Value{}
	for k, v := range in.Extra {
		data[k] = jinja.FromGoValue(v)
	}
	data["messages"] = jinja.NewList(msgs)
	data["add_generation_prompt"] = jinja.NewBool(in.AddGenerationPrompt)
	data["bos_token"] = jinja.NewString(bos)
	data["eos_token"] = jinja.NewString(eos)
	if in.Tools != nil {
		tools := make([]jinja.Value, len(in.Tools))
		for i, raw := range in.Tools {
			v, err := jsonValue(raw, str)
			if err != nil {
				return "", fmt.Errorf("llm: tool %d: %w", i, err)
			}
			tools[i] = v
		}
		data["tools"] = jinja.NewList(tools)
	}
	// The date a template prints must not depend on when a prompt is
	// encoded: a validator re-encodes it later and must get the same tokens.
	data["strftime_now"] = jinja.NewCallable("strftime_now", fixedStrftime)
	data[tojsonIndentName] = jinja.NewCallable(tojsonIndentName, tojsonIndent)
	out, err := c.tmpl.RenderValues(data)
	if err != nil {
		return "", fmt.Errorf("llm: chat template: %w", err)
	}
	return out, nil
}

// EncodeTemplate renders in with tmpl and tokenizes the result. Only the
// template's own text can produce control tokens: before rendering, the
// text of every control token inside message content, tool definitions
// and arguments is replaced by a private-use code point, so the rendered
// text holds control-token text only where the template wrote it; after
// special tokens are split out, the plain text gets the original strings
// back and is tokenized as text. User-defined tokens (<think>, <tool_call>)
// are recognised anywhere, as llama.cpp does with parse_special off.
func (t *Tokenizer) EncodeTemplate(tmpl *ChatTemplate, in ChatInput) ([]int, error) {
	if len(in.Messages) == 0 {
		return nil, errors.New("llm: no messages")
	}
	esc := newEscaper(t)
	text, err := tmpl.render(in, t.tokenText(t.bos), t.tokenText(t.eos), esc.escape)
	if err != nil {
		return nil, err
	}
	if esc.err != nil {
		return nil, esc.err
	}
	return t.withSpecials(t.encodeFragments([]fragment{{text: text, special: true}}, esc.restore)), nil
}

// tokenText is the text of token id, or "" for none.
func (t *Tokenizer) tokenText(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}
