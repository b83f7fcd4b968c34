package grammar

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// testPieces is a byte-level vocabulary: every single byte, the
// multi-byte pieces JSON output is made of, and one end mark (the last
// ID). Only the end mark has no bytes.
func testPieces() (pieces [][]byte, end int) {
	for b := range 256 {
		pieces = append(pieces, []byte{byte(b)})
	}
	for _, s := range []string{`{"`, `"}`, `":`, `","`, `":"`, `true`, `false`, `null`, `12`, `0.5`, `e+`, `-1`,
		`abc`, ` `, "\n", `é`, `日`, `😀`, `\u00e9`, `\"`, `[]`, `{}`, `],`, `"name`, `name`, `},{"`, `[{"`} {
		pieces = append(pieces, []byte(s))
	}
	pieces = append(pieces, nil)
	return pieces, len(pieces) - 1
}

// sample draws an answer under g by picking uniformly among the allowed
// tokens (preferring the end mark half the time it is allowed), within
// budget tokens; it returns the text and whether the end mark came.
func sample(t testing.TB, g *Grammar, v *Vocab, pieces [][]byte, end int, rng *rand.Rand, budget int) (string, bool) {
	t.Helper()
	c := v.NewConstraint(g)
	var out []byte
	for left := budget; left > 0; left-- {
		ids, err := c.Allowed(left)
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		id := ids[rng.IntN(len(ids))]
		if ids[len(ids)-1] == end && rng.IntN(2) == 0 {
			id = end
		}
		if !c.Accept(id, pieces[id]) {
			t.Fatalf("after %q: an allowed token %d (%q) was not accepted", out, id, pieces[id])
		}
		if id == end {
			return string(out), true
		}
		out = append(out, pieces[id]...)
	}
	if !c.Complete() {
		t.Fatalf("budget %d spent on an incomplete value %q", budget, out)
	}
	return string(out), false
}

// validator compiles schema with santhosh-tekuri/jsonschema; ok is false
// when that library refuses the schema.
func validator(t testing.TB, schema string) (*jsonschema.Schema, bool) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, false
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		return nil, false
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		return nil, false
	}
	return s, true
}

// mustValidate fails t unless out is one JSON value valid under s.
func mustValidate(t testing.TB, s *jsonschema.Schema, schema, out string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(out)))
	if err != nil {
		t.Fatalf("schema %s: output %q is not JSON: %v", schema, out, err)
	}
	if err := s.Validate(inst); err != nil {
		t.Fatalf("schema %s: output %q is invalid: %v", schema, out, err)
	}
}

// compileBoth compiles schema with this package and with the validator;
// both must accept it.
func compileBoth(t testing.TB, schema string) (*Grammar, *jsonschema.Schema) {
	t.Helper()
	g, err := CompileSchema([]byte(schema))
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	val, ok := validator(t, schema)
	if !ok {
		t.Fatalf("the validator refuses %s", schema)
	}
	return g, val
}
