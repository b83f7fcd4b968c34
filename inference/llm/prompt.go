package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// PromptTokenizer is a model's tokenizer and chat format without its
// weights: what a gateway needs to count a request's tokens exactly, and
// to check the token IDs a provider streams against the text it sent.
type PromptTokenizer struct {
	tok  *Tokenizer
	chat *ChatTemplate // nil: native ChatML
	id   inference.ModelID
	// cfg is the model's shape when its metadata parses (cfgOK).
	cfg   Config
	cfgOK bool
}

// OpenTokenizer reads the tokenizer of the model in dir after checking the
// directory against id, the catalog root (as Open does): counts made with
// another model's tokenizer would be wrong. The weights are hashed for the
// check but not loaded.
func OpenTokenizer(dir string, id inference.ModelID) (*PromptTokenizer, error) {
	f, _, err := openChecked(dir, &id)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only: a close error loses nothing
	tok, err := NewTokenizer(f)
	if err != nil {
		return nil, fmt.Errorf("llm: %s: %w", dir, err)
	}
	chat, err := chatTemplateOf(f)
	if err != nil {
		return nil, fmt.Errorf("llm: %s: %w", dir, err)
	}
	p := &PromptTokenizer{tok: tok, chat: chat, id: id}
	p.cfg, err = configFrom(f)
	p.cfgOK = err == nil
	return p, nil
}

// MoEShape is the model's MoE shape from its own metadata: every layer
// of a MoE model routes each token to topK experts (0, 0 for a dense
// model). known is false when the metadata is not a shape this engine
// runs.
func (p *PromptTokenizer) MoEShape() (layers, topK int, known bool) {
	if !p.cfgOK {
		return 0, 0, false
	}
	if p.cfg.Experts == 0 {
		return 0, 0, true
	}
	return p.cfg.Layers, p.cfg.ExpertsUsed, true
}

// ModelID is the catalog ID the tokenizer was checked against.
func (p *PromptTokenizer) ModelID() inference.ModelID { return p.id }

// EncodePrompt returns the prompt tokens of req exactly as the engine
// serving the model feeds them (chat template, BOS).
func (p *PromptTokenizer) EncodePrompt(req inference.GenerateRequest) ([]int, error) {
	return encodePrompt(p.tok, p.chat, req)
}

// Detokenize returns the text of ids.
func (p *PromptTokenizer) Detokenize(ids []int) string { return p.tok.Decode(ids) }

// chatTemplateOf compiles f's tokenizer.chat_template; nil when the file
// has none (prompts are then rendered as ChatML).
func chatTemplateOf(f *gguf.File) (*ChatTemplate, error) {
	src, ok, err := f.String("tokenizer.chat_template")
	if err != nil {
		return nil, fmt.Errorf("llm: tokenizer.chat_template: %w", err)
	}
	if !ok || src == "" {
		return nil, nil
	}
	return CompileChatTemplate(src)
}

// encodePrompt is EncodePrompt for a tokenizer and chat template.
func encodePrompt(tok *Tokenizer, chat *ChatTemplate, req inference.GenerateRequest) ([]int, error) {
	switch {
	case len(req.PromptTokens) > 0:
		for _, t := range req.PromptTokens {
			if t < 0 || t >= tok.VocabSize() {
				return nil, fmt.Errorf("llm: prompt token %d outside the vocabulary of %d", t, tok.VocabSize())
			}
		}
		return append([]int(nil), req.PromptTokens...), nil
	case len(req.Messages) > 0:
		return encodeChatInput(tok, chat, req.Messages, req.Sampling.Tools)
	case req.Prompt != "":
		return tok.EncodePrompt(req.Prompt), nil
	}
	return nil, errors.New("llm: empty prompt")
}

// encodeChatInput encodes messages and tools with the model's template,
// or with native ChatML when it has none (tools then described in the
// system message).
func encodeChatInput(tok *Tokenizer, tmpl *ChatTemplate, msgs []inference.Message, tools []terms.Tool) ([]int, error) {
	if tmpl == nil {
		msgs = withToolsSystem(msgs, tools)
	}
	in, err := chatInputOf(msgs)
	if err != nil {
		return nil, err
	}
	if len(tools) > 0 {
		in.Tools = toolsJSON(tools)
	}
	if tmpl == nil {
		plain := make([]inference.Message, len(msgs))
		for i, m := range in.Messages {
			plain[i] = inference.Message{Role: m.Role, Content: m.Content + chatMLToolCalls(m.ToolCalls)}
		}
		return tok.EncodeChat(ChatML, plain)
	}
	return tok.EncodeTemplate(tmpl, in)
}

// chatInputOf turns messages into what a chat template renders. Text
// parts are joined with nothing between them, so parts encode exactly as
// the string they spell; an image or audio part is refused, as this
// engine reads text only. A tool call's arguments go to the template as
// the JSON object they hold (templates print them with tojson, as
// llama.cpp gives them), or as the string itself when they hold none.
func chatInputOf(msgs []inference.Message) (ChatInput, error) {
	in := ChatInput{AddGenerationPrompt: true, Messages: make([]ChatMessage, len(msgs))}
	for i, m := range msgs {
		text, ok := m.Text()
		if !ok {
			j, typ := m.NonText()
			return ChatInput{}, &UnsupportedPartError{Message: i, Part: j, Type: typ}
		}
		cm := ChatMessage{Role: m.Role, Content: text, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			args := json.RawMessage(c.Arguments)
			if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
				args, _ = json.Marshal(c.Arguments) //nolint:errcheck // a string always encodes
			}
			cm.ToolCalls = append(cm.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
		}
		in.Messages[i] = cm
	}
	return in, nil
}

// UnsupportedPartError is a content part this engine cannot read.
type UnsupportedPartError struct {
	Message, Part int
	Type          string
}

func (e *UnsupportedPartError) Error() string {
	return fmt.Sprintf("llm: messages[%d].content[%d]: %s parts are not supported by this model", e.Message, e.Part, e.Type)
}
