package terms

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Response format types (OpenAI's response_format.type); "text" is the
// absence of a format.
const (
	FormatJSONObject = "json_object"
	FormatJSONSchema = "json_schema"
)

// ResponseFormat constrains an answer to JSON: any object (json_object)
// or a value valid under Schema (json_schema). It travels in Sampling, so
// the input commitment covers it and a committee replays the same mask.
type ResponseFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"` // compact JSON (Canonical)
	Strict bool            `json:"strict,omitempty"`
}

// Tool is a function the model may call: its name, description and
// JSON-schema parameters (compact JSON).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// Tool choices besides a function's name (ToolChoice.Function).
const (
	ToolChoiceNone     = "none"
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceFunction = "function"
)

// MaxTools bounds the tools of a request; MaxSchemaBytes a schema's size.
const (
	MaxTools       = 128
	MaxSchemaBytes = 64 << 10
)

// Check reports whether f is well formed and canonical; errors name the
// field relative to response_format.
func (f *ResponseFormat) Check() error {
	switch f.Type {
	case FormatJSONObject:
		if f.Name != "" || f.Schema != nil || f.Strict {
			return fieldErr("type", "json_object takes no schema")
		}
		return nil
	case FormatJSONSchema:
	default:
		return fieldErr("type", "%q is not json_object or json_schema", f.Type)
	}
	if err := text("json_schema.name", f.Name, 64); err != nil {
		return err
	}
	if f.Name == "" {
		return fieldErr("json_schema.name", "is required")
	}
	return canonicalJSON("json_schema.schema", f.Schema)
}

// Check reports whether t is well formed and canonical.
func (t *Tool) Check() error {
	if t.Name == "" {
		return fieldErr("function.name", "is required")
	}
	if err := text("function.name", t.Name, 64); err != nil {
		return err
	}
	if err := text("function.description", t.Description, -1); err != nil {
		return err
	}
	if t.Parameters == nil {
		return nil
	}
	return canonicalJSON("function.parameters", t.Parameters)
}

// Canonical returns raw as compact JSON, the one form a schema is carried
// and committed in.
func Canonical(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("terms: schema: %w", err)
	}
	return b.Bytes(), nil
}

func canonicalJSON(field string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return fieldErr(field, "is required")
	}
	if len(raw) > MaxSchemaBytes {
		return fieldErr(field, "%d bytes, limit %d", len(raw), MaxSchemaBytes)
	}
	c, err := Canonical(raw)
	if err != nil {
		return fieldErr(field, "is not JSON: %v", err)
	}
	if !bytes.Equal(c, raw) {
		return fieldErr(field, "is not compact JSON")
	}
	return nil
}
