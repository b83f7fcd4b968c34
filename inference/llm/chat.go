package llm

import (
	"fmt"
	"strings"

	"github.com/tenzrod/tenzrod/inference"
)

// ChatFormat is a family of chat templates rendered natively, without
// Jinja: the engine uses ChatML for files that carry no template (files
// that do are rendered by their own template, tmpl_chat.go); EncodeChat
// renders any of the families for callers that name one.
type ChatFormat string

// Supported chat formats.
const (
	ChatML ChatFormat = "chatml" // <|im_start|>role\n...<|im_end|>
	Llama3 ChatFormat = "llama3" // <|start_header_id|>role<|end_header_id|>
	Llama2 ChatFormat = "llama2" // [INST] ... [/INST]
	Gemma  ChatFormat = "gemma"  // <start_of_turn>role\n...<end_of_turn>
)

// ChatMLTemplate is the Jinja source of the ChatML template that generated
// models carry in tokenizer.chat_template.
const ChatMLTemplate = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// DetectChatFormat picks the format of a Jinja chat template; an empty or
// unrecognised template is rendered as ChatML.
func DetectChatFormat(tmpl string) ChatFormat {
	switch {
	case strings.Contains(tmpl, "<|im_start|>"):
		return ChatML
	case strings.Contains(tmpl, "<|start_header_id|>"):
		return Llama3
	case strings.Contains(tmpl, "<start_of_turn>"):
		return Gemma
	case strings.Contains(tmpl, "[INST]"):
		return Llama2
	}
	return ChatML
}

func validRole(r string) bool {
	if r == "" || len(r) > 32 {
		return false
	}
	for _, c := range r {
		if (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

// renderChat turns messages into fragments: template text (in which the
// text of special tokens is parsed) and message content (in which it is not,
// so content cannot forge turn markers). The assistant turn is left open.
func renderChat(format ChatFormat, msgs []inference.Message) ([]fragment, error) {
	var fr []fragment
	lit := func(s string) { fr = append(fr, fragment{text: s, special: true}) }
	content := func(s string) { fr = append(fr, fragment{text: s}) }
	for i, m := range msgs {
		if !validRole(m.Role) {
			return nil, fmt.Errorf("llm: message %d: invalid role %q", i, m.Role)
		}
	}
	switch format {
	case Llama3:
		for _, m := range msgs {
			lit("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n")
			content(strings.TrimSpace(m.Content))
			lit("<|eot_id|>")
		}
		lit("<|start_header_id|>assistant<|end_header_id|>\n\n")
	case Gemma:
		for _, m := range msgs {
			role := m.Role
			if role == "assistant" {
				role = "model"
			}
			lit("<start_of_turn>" + role + "\n")
			content(strings.TrimSpace(m.Content))
			lit("<end_of_turn>\n")
		}
		lit("<start_of_turn>model\n")
	case Llama2:
		system := ""
		for _, m := range msgs {
			switch m.Role {
			case "system":
				system += m.Content + "\n\n"
			case "assistant":
				content(" " + strings.TrimSpace(m.Content) + " ")
				lit("</s>")
			default:
				lit("[INST] ")
				content(system + strings.TrimSpace(m.Content))
				lit(" [/INST]")
				system = ""
			}
		}
	default:
		for _, m := range msgs {
			lit("<|im_start|>" + m.Role + "\n")
			content(m.Content)
			lit("<|im_end|>\n")
		}
		lit("<|im_start|>assistant\n")
	}
	return fr, nil
}

// EncodeChat renders messages with the given format and tokenizes them,
// prepending BOS when the tokenizer asks for it.
func (t *Tokenizer) EncodeChat(format ChatFormat, msgs []inference.Message) ([]int, error) {
	if len(msgs) == 0 {
		return nil, fmt.Errorf("llm: no messages")
	}
	fr, err := renderChat(format, msgs)
	if err != nil {
		return nil, err
	}
	return t.withSpecials(t.encodeFragments(fr, nil)), nil
}

// EncodePrompt tokenizes a raw prompt, adding BOS and EOS when the
// tokenizer asks for them.
func (t *Tokenizer) EncodePrompt(text string) []int {
	return t.withSpecials(t.Encode(text))
}

// withSpecials adds BOS and EOS as the tokenizer asks (llama.cpp's
// add_special), not doubling one the text already produced.
func (t *Tokenizer) withSpecials(ids []int) []int {
	if t.addBOS && (len(ids) == 0 || ids[0] != t.bos) {
		ids = append([]int{t.bos}, ids...)
	}
	if t.addEOS && ids[len(ids)-1] != t.eos {
		ids = append(ids, t.eos)
	}
	return ids
}
