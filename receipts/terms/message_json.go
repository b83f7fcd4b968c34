package terms

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The JSON forms below are OpenAI's chat message shapes.
type jsonMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"` // string, []jsonPart or nil
	Name       string         `json:"name,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolCalls  []jsonToolCall `json:"tool_calls,omitempty"`
}

type jsonPart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text,omitempty"`
	ImageURL   *jsonImageURL   `json:"image_url,omitempty"`
	InputAudio *jsonInputAudio `json:"input_audio,omitempty"`
}

type jsonImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type jsonInputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type jsonToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function jsonFunction `json:"function"`
}

type jsonFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// MarshalJSON renders m as OpenAI's message object: content a string, an
// array of parts, or null for an assistant message that only calls tools.
func (m Message) MarshalJSON() ([]byte, error) {
	j := jsonMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
	switch {
	case m.Parts != nil:
		parts := make([]jsonPart, len(m.Parts))
		for i, p := range m.Parts {
			parts[i] = p.toJSON()
		}
		j.Content = parts
	case m.Content == "" && len(m.ToolCalls) > 0:
		j.Content = nil
	}
	for _, c := range m.ToolCalls {
		j.ToolCalls = append(j.ToolCalls, jsonToolCall{ID: c.ID, Type: "function", Function: jsonFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	return json.Marshal(j)
}

func (p ContentPart) toJSON() jsonPart {
	j := jsonPart{Type: p.Type}
	switch p.Type {
	case PartImageURL:
		j.ImageURL = &jsonImageURL{URL: p.URL, Detail: p.Detail}
	case PartInputAudio:
		j.InputAudio = &jsonInputAudio{Data: p.Data, Format: p.Format}
	default:
		j.Text = &p.Text
	}
	return j
}

// UnmarshalJSON reads a message as ParseMessage does.
func (m *Message) UnmarshalJSON(b []byte) error {
	v, err := ParseMessage(b)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// tolerated are keys of the assistant message OpenAI returns that clients
// send back as they got it: accepted when null or empty, as then they say
// nothing the model would see.
var tolerated = map[string]bool{"refusal": true, "annotations": true, "audio": true, "function_call": true}

// ParseMessage reads one OpenAI chat message strictly: an unknown key, a
// part of an unknown type or a field of the wrong type is an error naming
// the field (see FieldOf), never dropped, and the result passes Check.
// content null or absent reads as "" (OpenAI allows it on assistant
// messages that call tools).
func ParseMessage(b []byte) (Message, error) {
	var raw map[string]json.RawMessage
	if err := strictObject(b, &raw); err != nil {
		return Message{}, fieldErr("message", "%v", err)
	}
	var m Message
	for k, v := range raw {
		var err error
		switch k {
		case "role":
			err = strict(v, &m.Role)
		case "name":
			err = strict(v, &m.Name)
		case "tool_call_id":
			err = strict(v, &m.ToolCallID)
		case "content":
			if m.Content, m.Parts, err = parseContent(v); err != nil {
				return Message{}, within("content", err)
			}
		case "tool_calls":
			if m.ToolCalls, err = parseToolCalls(v); err != nil {
				return Message{}, within("tool_calls", err)
			}
		default:
			if !tolerated[k] || !empty(v) {
				return Message{}, fieldErr(k, "is not supported")
			}
		}
		if err != nil {
			return Message{}, fieldErr(k, "%v", err)
		}
	}
	if err := m.Check(); err != nil {
		return Message{}, err
	}
	return m, nil
}

// parseContent reads a string, null or an array of parts; a part's error
// names a path starting "[i]", under the caller's "content".
func parseContent(v json.RawMessage) (string, []ContentPart, error) {
	if string(bytes.TrimSpace(v)) == "null" {
		return "", nil, nil
	}
	var s string
	if err := strict(v, &s); err == nil {
		return s, nil, nil
	}
	var raws []json.RawMessage
	if err := strict(v, &raws); err != nil {
		return "", nil, fieldErr("", "must be a string or an array of parts")
	}
	parts := make([]ContentPart, len(raws))
	for i, r := range raws {
		var j jsonPart
		if err := strictObject(r, &j); err != nil {
			return "", nil, fieldErr(fmt.Sprintf("[%d]", i), "%v", err)
		}
		p := ContentPart{Type: j.Type}
		if j.Text != nil {
			p.Text = *j.Text
		}
		if j.ImageURL != nil {
			p.URL, p.Detail = j.ImageURL.URL, j.ImageURL.Detail
		}
		if j.InputAudio != nil {
			p.Data, p.Format = j.InputAudio.Data, j.InputAudio.Format
		}
		// A key of another type's field is an error even when its value is
		// empty: the part would not round-trip to the same bytes.
		if (j.Text != nil) != (p.Type == PartText) || (j.ImageURL != nil) != (p.Type == PartImageURL) ||
			(j.InputAudio != nil) != (p.Type == PartInputAudio) {
			if err := p.check(); err != nil {
				return "", nil, within(fmt.Sprintf("[%d].", i), err)
			}
			return "", nil, fieldErr(fmt.Sprintf("[%d].type", i), "a %q part must carry exactly its own field", p.Type)
		}
		parts[i] = p
	}
	return "", parts, nil
}

func parseToolCalls(v json.RawMessage) ([]ToolCall, error) {
	if t := string(bytes.TrimSpace(v)); t == "null" || t == "[]" {
		return nil, nil
	}
	var js []json.RawMessage
	if err := strict(v, &js); err != nil {
		return nil, fieldErr("", "must be an array of tool calls")
	}
	calls := make([]ToolCall, len(js))
	for i, r := range js {
		var j jsonToolCall
		if err := strictObject(r, &j); err != nil {
			return nil, fieldErr(fmt.Sprintf("[%d]", i), "%v", err)
		}
		if j.Type != "function" {
			return nil, fieldErr(fmt.Sprintf("[%d].type", i), "%q is not function", j.Type)
		}
		calls[i] = ToolCall{ID: j.ID, Name: j.Function.Name, Arguments: j.Function.Arguments}
	}
	return calls, nil
}

// strict decodes one JSON value into v with no trailing data.
func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("terms: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("terms: trailing data")
	}
	return nil
}

// strictObject decodes a JSON object into v, refusing unknown keys.
func strictObject(b []byte, v any) error {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("terms: not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("terms: %w", err)
	}
	return nil
}

// empty reports whether v is null, "", [] or {}.
func empty(v json.RawMessage) bool {
	switch string(bytes.TrimSpace(v)) {
	case "null", `""`, "[]", "{}", "":
		return true
	}
	return false
}
