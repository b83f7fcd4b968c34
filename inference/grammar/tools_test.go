package grammar

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestToolCallsValidate: every sampled call names a declared function
// and its arguments validate under that function's parameters.
func TestToolCallsValidate(t *testing.T) {
	pieces, end := testPieces()
	v := NewVocab(pieces, []int{end})
	fns := []Function{
		{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}`)},
		{Name: "tree", Parameters: []byte(`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"k":{"type":"array","items":{"$ref":"#/$defs/n"}}},"required":["k"],"additionalProperties":false}}}`)},
		{Name: "free"},
	}
	g, err := CompileToolCall(fns)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{"free": `{"type":"object"}`}
	for _, fn := range fns[:2] {
		vals[fn.Name] = string(fn.Parameters)
	}
	seen := map[string]bool{}
	for seed := range 60 {
		out, _ := sample(t, g, v, pieces, end, rand.New(rand.NewPCG(uint64(seed), 6)), 120)
		var call struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(out), &call); err != nil {
			t.Fatalf("%q is not a call: %v", out, err)
		}
		schema, ok := vals[call.Name]
		if !ok {
			t.Fatalf("%q calls an undeclared function", out)
		}
		val, _ := validator(t, schema)
		mustValidate(t, val, schema, string(call.Arguments))
		seen[call.Name] = true
	}
	if len(seen) != len(fns) {
		t.Fatalf("60 draws called only %v", seen)
	}
	if _, err := CompileToolCall([]Function{{Name: "bad", Parameters: []byte(`{"type":"string","pattern":"x"}`)}}); err == nil {
		t.Fatal("a function whose parameters use pattern compiled")
	}
}
