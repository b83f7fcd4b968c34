package grammar

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// genSchema writes a random schema of the supported subset, depth
// levels deep at most.
func genSchema(rng *rand.Rand, depth int) string {
	kinds := 9
	if depth <= 0 {
		kinds = 6
	}
	switch rng.IntN(kinds) {
	case 0:
		return `{"type":"string"}`
	case 1:
		return `{"type":"integer"}`
	case 2:
		return `{"type":"number"}`
	case 3:
		return `{"type":["boolean","null"]}`
	case 4:
		return `{"enum":["a","b\"c",1.5,true,null,{"k":[1]}]}`
	case 5:
		return `{"const":"fixed é"}`
	case 6:
		var props, req []string
		for i := range rng.IntN(4) {
			name := fmt.Sprintf("p%d", i)
			props = append(props, fmt.Sprintf("%q:%s", name, genSchema(rng, depth-1)))
			if rng.IntN(2) == 0 {
				req = append(req, fmt.Sprintf("%q", name))
			}
		}
		add := []string{"false", "true", `{"type":"integer"}`}[rng.IntN(3)]
		return fmt.Sprintf(`{"type":"object","properties":{%s},"required":[%s],"additionalProperties":%s}`,
			strings.Join(props, ","), strings.Join(req, ","), add)
	case 7:
		return fmt.Sprintf(`{"type":"array","items":%s}`, genSchema(rng, depth-1))
	default:
		return fmt.Sprintf(`{"anyOf":[%s,%s]}`, genSchema(rng, depth-1), genSchema(rng, depth-1))
	}
}

// FuzzGrammarAgainstValidator: random schemas × random seeds → every
// sampled output validates under santhosh-tekuri/jsonschema.
func FuzzGrammarAgainstValidator(f *testing.F) {
	for i := range 8 {
		f.Add(uint64(i), uint64(i*7+1))
	}
	pieces, end := testPieces()
	v := NewVocab(pieces, []int{end})
	f.Fuzz(func(t *testing.T, schemaSeed, drawSeed uint64) {
		schema := genSchema(rand.New(rand.NewPCG(schemaSeed, 3)), 3)
		g, val := compileBoth(t, schema)
		rng := rand.New(rand.NewPCG(drawSeed, 4))
		for range 4 {
			out, _ := sample(t, g, v, pieces, end, rng, 400)
			mustValidate(t, val, schema, out)
		}
	})
}

// FuzzCompileSchema: hostile bytes never panic or hang the compiler, and
// when both it and the validator accept a schema, what it generates
// validates.
func FuzzCompileSchema(f *testing.F) {
	for _, s := range schemas {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}}}`,
		`{"type":"object","properties":{"a~1b":{"type":"null"}},"required":["a~1b"]}`, `{"items":{"items":{}}}`, `[`, `{"type":[]}`} {
		f.Add([]byte(s))
	}
	pieces, end := testPieces()
	v := NewVocab(pieces, []int{end})
	f.Fuzz(func(t *testing.T, schema []byte) {
		if len(schema) > 4096 {
			return
		}
		g, err := CompileSchema(schema)
		if err != nil {
			return
		}
		val, ok := validator(t, string(schema))
		if !ok {
			return
		}
		out, ended := sample(t, g, v, pieces, end, rand.New(rand.NewPCG(uint64(len(schema)), 5)), 300)
		if ended {
			mustValidate(t, val, string(schema), out)
		}
	})
}
