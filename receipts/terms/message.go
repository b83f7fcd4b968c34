package terms

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Message is one chat message as OpenAI's chat API carries it. Content is
// the string form; Parts the array form, and then Content is empty: the
// two forms stay apart so that a request has one encoding and its digest
// says which form the model saw. New fields are omitted when empty, so a
// plain message encodes (on the wire and in the digest) as it did before
// they existed. JSON (message_json.go) is OpenAI's shape.
type Message struct {
	Role    string // "system", "developer", "user", "assistant", "tool"
	Content string
	// Parts is content given as an array of parts.
	Parts []ContentPart `cbor:",omitempty"`
	// Name is the optional participant name.
	Name string `cbor:",omitempty"`
	// ToolCallID is the call a "tool" message answers.
	ToolCallID string `cbor:",omitempty"`
	// ToolCalls are the function calls an assistant message made.
	ToolCalls []ToolCall `cbor:",omitempty"`
}

// Content part types.
const (
	PartText       = "text"
	PartImageURL   = "image_url"
	PartInputAudio = "input_audio"
)

// ContentPart is one part of a message's content: text, an image (by URL
// or data: URL) or audio (base64 data and its format). Only the fields of
// its Type are set.
type ContentPart struct {
	Type   string
	Text   string `cbor:",omitempty"`
	URL    string `cbor:",omitempty"` // image_url.url
	Detail string `cbor:",omitempty"` // image_url.detail
	Data   string `cbor:",omitempty"` // input_audio.data
	Format string `cbor:",omitempty"` // input_audio.format
}

// ToolCall is one function call of an assistant message (OpenAI's type
// "function", the only type): Arguments is the JSON text the model wrote,
// kept byte for byte.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Limits a message must respect, beyond the request's own size limits.
const (
	MaxParts     = 256
	MaxToolCalls = 128
	maxShort     = 256 // IDs, names, formats, details
)

var roles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// Check reports whether m is well formed and canonical: a known role, one
// content form, fields only where their role allows them, parts of a known
// type carrying only their own fields, and valid UTF-8 everywhere. The
// error names the offending field relative to the message.
func (m *Message) Check() error {
	if !roles[m.Role] {
		return fieldErr("role", "role %q is not system, developer, user, assistant or tool", m.Role)
	}
	if m.Parts != nil && m.Content != "" {
		return fieldErr("content", "both a string and parts")
	}
	if m.Parts != nil && len(m.Parts) == 0 {
		return fieldErr("content", "an empty array of parts")
	}
	if len(m.Parts) > MaxParts {
		return fieldErr("content", "%d parts, limit %d", len(m.Parts), MaxParts)
	}
	for i := range m.Parts {
		if err := m.Parts[i].check(); err != nil {
			return within(fmt.Sprintf("content[%d].", i), err)
		}
	}
	if err := text("content", m.Content, -1); err != nil {
		return err
	}
	if err := text("name", m.Name, maxShort); err != nil {
		return err
	}
	if (m.Role == "tool") != (m.ToolCallID != "") {
		return fieldErr("tool_call_id", "is required on tool messages and only there")
	}
	if err := text("tool_call_id", m.ToolCallID, maxShort); err != nil {
		return err
	}
	if len(m.ToolCalls) > 0 && m.Role != "assistant" {
		return fieldErr("tool_calls", "only assistant messages carry tool calls")
	}
	if len(m.ToolCalls) > MaxToolCalls {
		return fieldErr("tool_calls", "%d calls, limit %d", len(m.ToolCalls), MaxToolCalls)
	}
	for i, c := range m.ToolCalls {
		if err := c.check(); err != nil {
			return within(fmt.Sprintf("tool_calls[%d].", i), err)
		}
	}
	return nil
}

// Size is the number of bytes m carries besides its role (for a plain
// message, its content's), for request size limits and price bounds.
func (m *Message) Size() int {
	n := len(m.Content) + len(m.Name) + len(m.ToolCallID)
	for _, p := range m.Parts {
		n += len(p.Type) + len(p.Text) + len(p.URL) + len(p.Detail) + len(p.Data) + len(p.Format)
	}
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}

// Text is the message's text: Content, or its text parts joined with
// nothing between them. ok is false when a part is not text.
func (m *Message) Text() (s string, ok bool) {
	if m.Parts == nil {
		return m.Content, true
	}
	var b []byte
	for _, p := range m.Parts {
		if p.Type != PartText {
			return "", false
		}
		b = append(b, p.Text...)
	}
	return string(b), true
}

// NonText returns the index and type of the first part that is not text;
// i is -1 when every part is text.
func (m *Message) NonText() (i int, typ string) {
	for i, p := range m.Parts {
		if p.Type != PartText {
			return i, p.Type
		}
	}
	return -1, ""
}

func (p *ContentPart) check() error {
	var other []string // fields that must be empty for the type
	switch p.Type {
	case PartText:
		other = []string{p.URL, p.Detail, p.Data, p.Format}
	case PartImageURL:
		if p.URL == "" {
			return fieldErr("image_url.url", "is required")
		}
		if p.Detail != "" && p.Detail != "auto" && p.Detail != "low" && p.Detail != "high" {
			return fieldErr("image_url.detail", "%q is not auto, low or high", p.Detail)
		}
		other = []string{p.Text, p.Data, p.Format}
	case PartInputAudio:
		if p.Data == "" || p.Format == "" {
			return fieldErr("input_audio", "data and format are required")
		}
		other = []string{p.Text, p.URL, p.Detail}
	default:
		return fieldErr("type", "%q is not text, image_url or input_audio", p.Type)
	}
	for _, s := range other {
		if s != "" {
			return fieldErr("type", "a %s part carries another type's field", p.Type)
		}
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"text", p.Text, -1}, {"image_url.url", p.URL, -1}, {"image_url.detail", p.Detail, maxShort},
		{"input_audio.data", p.Data, -1}, {"input_audio.format", p.Format, maxShort}} {
		if err := text(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	return nil
}

func (c *ToolCall) check() error {
	if c.ID == "" {
		return fieldErr("id", "is required")
	}
	if c.Name == "" {
		return fieldErr("function.name", "is required")
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"id", c.ID, maxShort}, {"function.name", c.Name, maxShort}, {"function.arguments", c.Arguments, -1}} {
		if err := text(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	return nil
}

// FieldError is a malformed message field; Field is its path relative to
// the message ("content[2].type"), for an API error's param.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// FieldOf returns the path of the field err names ("content[2].type"),
// or "" when err names none.
func FieldOf(err error) string {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return ""
	}
	return fe.Field
}

// within returns err with its field path under prefix; an error that
// names no field is named by prefix alone.
func within(prefix string, err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return &FieldError{Field: strings.TrimSuffix(prefix, "."), Msg: err.Error()}
	}
	return &FieldError{Field: prefix + fe.Field, Msg: fe.Msg}
}

// text checks that s is valid UTF-8 and, when max >= 0, at most max bytes.
func text(field, s string, max int) error {
	if max >= 0 && len(s) > max {
		return fieldErr(field, "%d bytes, limit %d", len(s), max)
	}
	if !utf8.ValidString(s) {
		return fieldErr(field, "is not valid UTF-8")
	}
	return nil
}
