package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// applyTools reads tools, tool_choice, parallel_tool_calls and
// response_format into s, in the canonical form the request digest
// commits to (schemas as compact JSON). Their empty forms (no tools,
// tool_choice "auto" or "none" without tools, response_format "text")
// leave s as a plain request's. The deprecated functions/function_call
// are refused by name.
func (t *toolFields) applyTools(s *inference.Sampling) *Error {
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"functions", t.Functions}, {"function_call", t.FunctionCall}} {
		if c := compact(f.raw); len(f.raw) != 0 && c != "null" && c != "[]" && c != `"none"` {
			return BadRequest(f.name, "%s is deprecated and not supported: use tools and tool_choice", f.name)
		}
	}
	if e := parseResponseFormat(t.ResponseFormat, s); e != nil {
		return e
	}
	if e := parseTools(t.Tools, s); e != nil {
		return e
	}
	if e := parseToolChoice(t.ToolChoice, s); e != nil {
		return e
	}
	if p := compact(t.ParallelToolCalls); p == "false" && len(s.Tools) > 0 {
		s.NoParallelToolCalls = true
	} else if len(t.ParallelToolCalls) > 0 && p != "true" && p != "false" && p != "null" {
		return BadRequest("parallel_tool_calls", "parallel_tool_calls must be a boolean")
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || compact(raw) == "null" }

func parseResponseFormat(raw json.RawMessage, s *inference.Sampling) *Error {
	if isNull(raw) {
		return nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Strict      *bool           `json:"strict"`
		} `json:"json_schema"`
	}
	if err := decodeInto(raw, &rf); err != nil {
		return BadRequest("response_format", "response_format: %v", err)
	}
	switch rf.Type {
	case "text":
		return nil
	case terms.FormatJSONObject:
		s.Format = &terms.ResponseFormat{Type: terms.FormatJSONObject}
		return nil
	case terms.FormatJSONSchema:
	default:
		return BadRequest("response_format.type", "response_format.type %q is not text, json_object or json_schema", rf.Type)
	}
	js := rf.JSONSchema
	if js == nil {
		return BadRequest("response_format.json_schema", "response_format.json_schema is required for type json_schema")
	}
	f := &terms.ResponseFormat{Type: terms.FormatJSONSchema, Name: js.Name, Strict: js.Strict != nil && *js.Strict}
	if isNull(js.Schema) {
		js.Schema = json.RawMessage(`{}`)
	}
	schema, e := checkSchema("response_format.json_schema.schema", js.Schema)
	if e != nil {
		return e
	}
	f.Schema = schema
	if err := f.Check(); err != nil {
		return BadRequest("response_format."+terms.FieldOf(err), "response_format.%v", err)
	}
	s.Format = f
	return nil
}

func parseTools(raw json.RawMessage, s *inference.Sampling) *Error {
	if isNull(raw) {
		return nil
	}
	var tools []struct {
		Type     string `json:"type"`
		Function *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		} `json:"function"`
	}
	if err := decodeInto(raw, &tools); err != nil {
		return BadRequest("tools", "tools: %v", err)
	}
	if len(tools) > terms.MaxTools {
		return BadRequest("tools", "tools: %d tools, limit %d", len(tools), terms.MaxTools)
	}
	for i, tl := range tools {
		param := fmt.Sprintf("tools[%d]", i)
		if tl.Type != "function" || tl.Function == nil {
			return BadRequest(param, "%s: only tools of type function (with a function object) are supported", param)
		}
		t := terms.Tool{Name: tl.Function.Name, Description: tl.Function.Description, Strict: tl.Function.Strict != nil && *tl.Function.Strict}
		if !isNull(tl.Function.Parameters) {
			p, e := checkSchema(param+".function.parameters", tl.Function.Parameters)
			if e != nil {
				return e
			}
			t.Parameters = p
		}
		if err := t.Check(); err != nil {
			return BadRequest(param+"."+terms.FieldOf(err), "%s.%v", param, err)
		}
		if slices.ContainsFunc(s.Tools, func(o terms.Tool) bool { return o.Name == t.Name }) {
			return BadRequest(param+".function.name", "%s: the function %q is declared twice", param, t.Name)
		}
		s.Tools = append(s.Tools, t)
	}
	return nil
}

func parseToolChoice(raw json.RawMessage, s *inference.Sampling) *Error {
	if isNull(raw) {
		return nil
	}
	var mode string
	if err := json.Unmarshal(raw, &mode); err == nil {
		switch mode {
		case terms.ToolChoiceAuto:
			return nil
		case terms.ToolChoiceNone:
			if len(s.Tools) > 0 {
				s.ToolChoice = mode
			}
			return nil
		case terms.ToolChoiceRequired:
			if len(s.Tools) == 0 {
				return BadRequest("tool_choice", "tool_choice %q needs tools", mode)
			}
			s.ToolChoice = mode
			return nil
		}
		return BadRequest("tool_choice", "tool_choice %q is not none, auto, required or a function", mode)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := decodeInto(raw, &named); err != nil || named.Type != "function" {
		return BadRequest("tool_choice", "tool_choice must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\":...}}")
	}
	if !slices.ContainsFunc(s.Tools, func(t terms.Tool) bool { return t.Name == named.Function.Name }) {
		return BadRequest("tool_choice", "tool_choice names the function %q, which tools do not declare", named.Function.Name)
	}
	s.ToolChoice, s.ToolName = terms.ToolChoiceFunction, named.Function.Name
	return nil
}

// checkSchema returns raw compacted, once santhosh-tekuri/jsonschema
// compiles it (a schema no validator accepts is the buyer's error, said
// before any provider is paid).
func checkSchema(param string, raw json.RawMessage) (json.RawMessage, *Error) {
	if len(raw) > terms.MaxSchemaBytes {
		return nil, BadRequest(param, "%s: %d bytes, limit %d", param, len(raw), terms.MaxSchemaBytes)
	}
	c, err := terms.Canonical(raw)
	if err != nil {
		return nil, BadRequest(param, "%s: %v", param, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(c))
	if err != nil {
		return nil, BadRequest(param, "%s: %v", param, err)
	}
	comp := jsonschema.NewCompiler()
	// References outside the schema are never fetched.
	comp.UseLoader(noLoader{})
	if err := comp.AddResource("request:///schema.json", doc); err != nil {
		return nil, BadRequest(param, "%s: %v", param, err)
	}
	if _, err := comp.Compile("request:///schema.json"); err != nil {
		return nil, BadRequest(param, "%s: not a valid JSON schema: %v", param, err)
	}
	return c, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("openai: schema: %s: only references inside the schema are followed", url)
}

// decodeInto decodes raw into v. Unknown fields are ignored, as in the
// rest of a request: SDKs add fields of their own.
func decodeInto(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("openai: %w", err)
	}
	return nil
}
