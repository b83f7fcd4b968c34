package grammar

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// maxElems bounds a compiled grammar's size.
const maxElems = 200_000

// unsupported are keywords that constrain a value in ways the compiler
// does not generate: a schema using one is refused rather than answered
// with output its validator would reject.
var unsupported = []string{
	"allOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependentRequired",
	"prefixItems", "contains", "minContains", "maxContains", "uniqueItems", "minItems", "maxItems",
	"minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"multipleOf", "minProperties", "maxProperties", "patternProperties", "propertyNames",
	"unevaluatedItems", "unevaluatedProperties", "$dynamicRef", "$recursiveRef",
}

// compiler turns a schema document into rules.
type compiler struct {
	b    builder
	root any
	refs map[string]int // compiled $ref targets, by pointer
	memo map[string]int // shared rules: "string", "number", …
}

// CompileSchema compiles a JSON schema into the grammar of the compact
// JSON texts it generates, all valid under the schema. Errors name the
// schema location ("properties.a.type").
func CompileSchema(schema []byte) (*Grammar, error) {
	v, err := decode(schema)
	if err != nil {
		return nil, err
	}
	c := &compiler{root: v, refs: map[string]int{}, memo: map[string]int{}}
	r, err := c.node(v, "", 0)
	if err != nil {
		return nil, err
	}
	g := c.b.build(r)
	if st := g.Start(); st.Dead() || st.MinBytes() >= inf {
		return nil, fmt.Errorf("grammar: schema: no finite value matches")
	}
	return g, nil
}

// JSONObject is the grammar of any JSON object (response_format
// json_object).
func JSONObject() *Grammar {
	c := &compiler{refs: map[string]int{}, memo: map[string]int{}}
	return c.b.build(c.anyObject())
}

func at(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (c *compiler) node(v any, path string, depth int) (int, error) {
	if depth > maxNesting {
		return 0, fmt.Errorf("grammar: schema %s: nested deeper than %d", path, maxNesting)
	}
	if c.b.elems > maxElems {
		return 0, fmt.Errorf("grammar: schema: larger than %d grammar elements", maxElems)
	}
	switch v := v.(type) {
	case bool:
		if !v {
			return 0, fmt.Errorf("grammar: schema %s: false matches no value", path)
		}
		return c.anyValue(), nil
	case *object:
		return c.schema(v, path, depth)
	}
	return 0, fmt.Errorf("grammar: schema %s: a schema is an object or a boolean", path)
}

func (c *compiler) schema(s *object, path string, depth int) (int, error) {
	for _, k := range unsupported {
		if _, ok := s.get(k); ok {
			return 0, fmt.Errorf("grammar: schema %s: %s is not supported", at(path, k), k)
		}
	}
	constraining := 0
	for _, k := range []string{"type", "enum", "const", "anyOf", "$ref", "properties", "items", "additionalProperties", "required"} {
		if _, ok := s.get(k); ok {
			constraining++
		}
	}
	if ref, ok := s.get("$ref"); ok {
		if constraining > 1 {
			return 0, fmt.Errorf("grammar: schema %s: $ref beside other constraints is not supported", path)
		}
		return c.ref(ref, path, depth)
	}
	if alts, ok := s.get("anyOf"); ok {
		if constraining > 1 {
			return 0, fmt.Errorf("grammar: schema %s: anyOf beside other constraints is not supported", path)
		}
		return c.anyOf(alts, path, depth)
	}
	types, err := typesOf(s, path)
	if err != nil {
		return 0, err
	}
	if lits, ok, err := literals(s, path, types); ok || err != nil {
		if err != nil {
			return 0, err
		}
		r := c.b.rule()
		for _, l := range lits {
			c.b.alt(r, lit(l))
		}
		return r, nil
	}
	if types == nil {
		switch {
		case has(s, "properties") || has(s, "additionalProperties") || has(s, "required"):
			types = []string{"object"}
		case has(s, "items"):
			types = []string{"array"}
		default:
			return c.anyValue(), nil
		}
	}
	r := c.b.rule()
	for _, t := range types {
		var sub int
		switch t {
		case "object":
			sub, err = c.object(s, path, depth)
		case "array":
			sub, err = c.array(s, path, depth)
		default:
			sub = c.scalar(t)
		}
		if err != nil {
			return 0, err
		}
		c.b.alt(r, []part{ref(sub)})
	}
	return r, nil
}

func has(s *object, k string) bool { _, ok := s.get(k); return ok }

var jsonTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// typesOf reads "type" (a name or an array of names); nil when absent.
func typesOf(s *object, path string) ([]string, error) {
	t, ok := s.get("type")
	if !ok {
		return nil, nil
	}
	var names []any
	switch t := t.(type) {
	case string:
		names = []any{t}
	case []any:
		names = t
	default:
		return nil, fmt.Errorf("grammar: schema %s: a type name or an array of them", at(path, "type"))
	}
	var out []string
	for _, n := range names {
		name, _ := n.(string)
		if !slices.Contains(jsonTypes, name) {
			return nil, fmt.Errorf("grammar: schema %s: unknown type %v", at(path, "type"), n)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("grammar: schema %s: an empty list of types", at(path, "type"))
	}
	return out, nil
}

// literals reads const or enum: the values, compactly encoded, that also
// have one of types (when given).
func literals(s *object, path string, types []string) ([]string, bool, error) {
	var vals []any
	key := "const"
	if v, ok := s.get("const"); ok {
		vals = []any{v}
		if has(s, "enum") {
			return nil, true, fmt.Errorf("grammar: schema %s: const beside enum is not supported", path)
		}
	} else if v, ok := s.get("enum"); ok {
		key = "enum"
		a, isArr := v.([]any)
		if !isArr {
			return nil, true, fmt.Errorf("grammar: schema %s: an array of values", at(path, "enum"))
		}
		vals = a
	} else {
		return nil, false, nil
	}
	var out []string
	for _, v := range vals {
		if types != nil && !slices.ContainsFunc(types, func(t string) bool { return typeOf(v, t) }) {
			continue
		}
		if l := encode(v); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, true, fmt.Errorf("grammar: schema %s: no value matches", at(path, key))
	}
	return out, true, nil
}

// typeOf reports whether v has JSON-schema type t.
func typeOf(v any, t string) bool {
	switch v := v.(type) {
	case *object:
		return t == "object"
	case []any:
		return t == "array"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case json.Number:
		if t == "number" {
			return true
		}
		_, err := v.Int64()
		return t == "integer" && err == nil
	}
	return false
}

func (c *compiler) anyOf(v any, path string, depth int) (int, error) {
	alts, ok := v.([]any)
	if !ok || len(alts) == 0 {
		return 0, fmt.Errorf("grammar: schema %s: a non-empty array of schemas", at(path, "anyOf"))
	}
	r := c.b.rule()
	for i, a := range alts {
		sub, err := c.node(a, fmt.Sprintf("%s[%d]", at(path, "anyOf"), i), depth+1)
		if err != nil {
			return 0, err
		}
		c.b.alt(r, []part{ref(sub)})
	}
	return r, nil
}

// ref compiles a local reference ("#", "#/$defs/x", "#/definitions/x",
// any JSON pointer into the document); recursion is a recursive rule.
func (c *compiler) ref(v any, path string, depth int) (int, error) {
	p, _ := v.(string)
	if r, ok := c.refs[p]; ok {
		return r, nil
	}
	if !strings.HasPrefix(p, "#") {
		return 0, fmt.Errorf("grammar: schema %s: only references inside the schema (#...) are supported", at(path, "$ref"))
	}
	target, err := pointer(c.root, strings.TrimPrefix(p, "#"))
	if err != nil {
		return 0, fmt.Errorf("grammar: schema %s: %w", at(path, "$ref"), err)
	}
	r := c.b.rule()
	c.refs[p] = r
	sub, err := c.node(target, p, depth+1)
	if err != nil {
		return 0, err
	}
	c.b.alt(r, []part{ref(sub)})
	return r, nil
}

// pointer resolves a JSON pointer (RFC 6901) in doc.
func pointer(doc any, p string) (any, error) {
	if p == "" {
		return doc, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON pointer", p)
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		o, ok := doc.(*object)
		if !ok {
			return nil, fmt.Errorf("%q leads nowhere", p)
		}
		if doc, ok = o.get(tok); !ok {
			return nil, fmt.Errorf("%q leads nowhere", p)
		}
	}
	return doc, nil
}
