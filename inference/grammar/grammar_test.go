package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var schemas = []string{
	`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"ok":{"type":"boolean"}},"required":["name","age","ok"],"additionalProperties":false}`,
	`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":["string","null"]},"c":{"enum":["x","y",3,null]}},"required":["a"]}`,
	`{"type":"array","items":{"type":"object","properties":{"k":{"const":"v"}},"required":["k"],"additionalProperties":false}}`,
	`{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"integer"}}]}`,
	`{"type":"object","properties":{"tree":{"$ref":"#/$defs/node"}},"required":["tree"],"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v","kids"],"additionalProperties":false}}}`,
	`{"type":"object","additionalProperties":{"type":"boolean"}}`,
	`{"type":"object","additionalProperties":false}`,
	`{}`,
	`true`,
	`{"type":"object","properties":{"s":{"type":"string","description":"any text","title":"S"}},"required":["s"],"additionalProperties":false}`,
}

// TestSampledOutputsValidate draws answers under each schema with many
// seeds and budgets; every one is JSON valid under the schema.
func TestSampledOutputsValidate(t *testing.T) {
	pieces, end := testPieces()
	v := NewVocab(pieces, []int{end})
	for _, schema := range schemas {
		g, val := compileBoth(t, schema)
		for seed := range 40 {
			rng := rand.New(rand.NewPCG(uint64(seed), 1))
			out, _ := sample(t, g, v, pieces, end, rng, 40+seed*5)
			mustValidate(t, val, schema, out)
		}
	}
}

// TestJSONObject: any object, and nothing else.
func TestJSONObject(t *testing.T) {
	pieces, end := testPieces()
	v := NewVocab(pieces, []int{end})
	g := JSONObject()
	val, _ := validator(t, `{"type":"object"}`)
	for seed := range 40 {
		out, _ := sample(t, g, v, pieces, end, rand.New(rand.NewPCG(uint64(seed), 2)), 60)
		mustValidate(t, val, "json_object", out)
	}
	s := g.Start()
	if _, ok := s.Advance('['); ok {
		t.Fatal("json_object accepted an array")
	}
}

// TestBudget: with the budget of the shortest value, only it fits.
func TestBudget(t *testing.T) {
	pieces, end := testPieces()
	v := NewVocab(pieces, []int{end})
	g, err := CompileSchema([]byte(`{"type":"object","properties":{"n":{"type":"null"}},"required":["n"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	c := v.NewConstraint(g)
	// {"n":null} is 10 bytes: 10 single-byte tokens and the end mark.
	ids, err := c.Allowed(11)
	if err != nil || len(ids) != 2 || string(pieces[ids[0]]) != "{" || string(pieces[ids[1]]) != `{"` {
		t.Fatalf("budget 11: %v %v", ids, err)
	}
	// With 9, only the two-byte piece leaves room; with less, it is still
	// the nearest to completion.
	for _, budget := range []int{9, 3} {
		ids, err = c.Allowed(budget)
		if err != nil || len(ids) != 1 || string(pieces[ids[0]]) != `{"` {
			t.Fatalf("budget %d: %v %v", budget, ids, err)
		}
	}
	for _, tok := range []string{`{"`, "n", `":`, "null", "}"} {
		id := pieceID(t, pieces, tok)
		if !c.Accept(id, pieces[id]) {
			t.Fatalf("%q refused", tok)
		}
	}
	ids, err = c.Allowed(1)
	if err != nil || len(ids) != 1 || ids[0] != end {
		t.Fatalf("complete value: allowed %v, %v; want only the end mark", ids, err)
	}
	if !c.Accept(end, nil) {
		t.Fatal("the end mark was refused on a complete value")
	}
}

func pieceID(t *testing.T, pieces [][]byte, s string) int {
	for i, p := range pieces {
		if string(p) == s {
			return i
		}
	}
	t.Fatalf("no piece %q", s)
	return -1
}

// TestRefusedSchemas: a keyword the compiler cannot honour is refused,
// named by its location, rather than answered invalidly.
func TestRefusedSchemas(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"string","minLength":3}`:                          "minLength",
		`{"type":"object","properties":{"a":{"pattern":"x"}}}`:     "properties.a.pattern",
		`{"type":"object","properties":{"a":{}},"required":["b"]}`: "required",
		`{"type":"frob"}`:                      "type",
		`{"enum":[]}`:                          "enum",
		`{"type":"string","enum":[1,2]}`:       "enum",
		`false`:                                "no value",
		`{"$ref":"#"}`:                         "no finite value",
		`{"$ref":"http://example.com/s.json"}`: "$ref",
		`{"anyOf":[{"type":"string"}],"type":"string"}`:                 "anyOf beside",
		`{"type":"object","properties":{"a":{"type":"string"},"a":{}}}`: "duplicate",
		`[1]`: "object or a boolean",
		`{"type":"array","items":{"type":"integer"},"minItems":1} trail`:   "after the value",
		`{"type":"object","properties":{"x":{"allOf":[{"type":"null"}]}}}`: "properties.x.allOf",
	} {
		_, err := CompileSchema([]byte(schema))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want one naming %q", schema, err, want)
		}
	}
}
