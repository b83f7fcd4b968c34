package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

const personSchema = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},` +
	`"tags":{"type":"array","items":{"enum":["a","b"]}},"boss":{"anyOf":[{"type":"null"},{"type":"boolean"}]}},` +
	`"required":["name","age","tags","boss"],"additionalProperties":false}`

func compileValidator(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJSONSchemaAlwaysValid: on the random-weight test model a
// json_schema request answers JSON valid under the schema for every
// prompt, greedy and seeded, and the answer ends with an end-of-turn
// token once complete.
func TestJSONSchemaAlwaysValid(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{Threads: 1})
	val := compileValidator(t, personSchema)
	format := &terms.ResponseFormat{Type: terms.FormatJSONSchema, Name: "person", Schema: json.RawMessage(personSchema)}
	for i := range 20 {
		sp := inference.Sampling{Temperature: float64(i%3) * 0.7, TopP: 1, Seed: uint64(i), MaxTokens: 60, Format: format}
		res, err := e.Generate(context.Background(), inference.GenerateRequest{Messages: chat(fmt.Sprintf("prompt %d: describe someone", i)), Sampling: sp},
			func(inference.Token) error { return nil })
		if err != nil {
			t.Fatalf("prompt %d: %v", i, err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(res.Text))
		if err != nil {
			t.Fatalf("prompt %d: %q is not JSON: %v", i, res.Text, err)
		}
		if err := val.Validate(inst); err != nil {
			t.Fatalf("prompt %d: %q: %v", i, res.Text, err)
		}
	}
}

// TestJSONObjectFormat: json_object answers an object.
func TestJSONObjectFormat(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{Threads: 1})
	sp := inference.Sampling{Temperature: 1, TopP: 1, Seed: 3, MaxTokens: 40, Format: &terms.ResponseFormat{Type: terms.FormatJSONObject}}
	res, err := e.Generate(context.Background(), inference.GenerateRequest{Messages: chat("an object"), Sampling: sp}, func(inference.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(res.Text), &obj); err != nil {
		t.Fatalf("%q is not an object: %v", res.Text, err)
	}
}

// TestResampleAppliesMask: a committee's Resample of an honest
// constrained answer draws every signed token, also chunk by chunk from
// the middle of the answer; the unconstrained answer to the same request
// (a provider that ignored the mask) is not what the sampler draws.
func TestResampleAppliesMask(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{Threads: 1})
	sp := inference.Sampling{Temperature: 0.8, TopP: 1, Seed: 11, MaxTokens: 48,
		Format: &terms.ResponseFormat{Type: terms.FormatJSONSchema, Name: "p", Schema: json.RawMessage(personSchema)}}
	req := inference.GenerateRequest{Messages: chat("resample me"), Sampling: sp}
	honest, err := e.Generate(context.Background(), req, func(inference.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range []int{0, len(honest.Tokens) / 2} {
		prefix := append(append([]int(nil), honest.Prompt...), honest.Tokens[:from]...)
		_, drawn, err := e.ResampleAnswer(context.Background(), prefix, from, honest.Tokens[from:], 4, sp)
		if err != nil {
			t.Fatal(err)
		}
		for j, d := range drawn {
			if d != honest.Tokens[from+j] {
				t.Fatalf("from %d: step %d drew %d, the honest answer has %d", from, from+j, d, honest.Tokens[from+j])
			}
		}
	}
	free := sp
	free.Format = nil
	req.Sampling = free
	cheat, err := e.Generate(context.Background(), req, func(inference.Token) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	_, drawn, err := e.Resample(context.Background(), cheat.Prompt, cheat.Tokens, 4, sp)
	if err != nil {
		t.Fatal(err)
	}
	redrawn := 0
	for j, d := range drawn {
		if d != cheat.Tokens[j] {
			redrawn++
		}
	}
	if redrawn == 0 {
		t.Fatalf("the unconstrained answer %q resamples as if drawn under the mask", cheat.Text)
	}
}

// TestToolChoiceConstrainsToACall: with tool_choice "required" the answer
// is a call to a declared function with arguments valid under its
// schema; with a named function, a call to that one.
func TestToolChoiceConstrainsToACall(t *testing.T) {
	e := open(t, tinyOptions(), llm.Options{Threads: 1})
	weather := `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"],"additionalProperties":false}`
	tools := []terms.Tool{{Name: "weather", Parameters: json.RawMessage(weather)}, {Name: "person", Parameters: json.RawMessage(personSchema)}}
	vals := map[string]*jsonschema.Schema{"weather": compileValidator(t, weather), "person": compileValidator(t, personSchema)}
	for i := range 10 {
		sp := inference.Sampling{Temperature: 1, TopP: 1, Seed: uint64(i), MaxTokens: 80, Tools: tools, ToolChoice: terms.ToolChoiceRequired}
		if i%2 == 1 {
			sp.ToolChoice, sp.ToolName = terms.ToolChoiceFunction, "person"
		}
		res, err := e.Generate(context.Background(), inference.GenerateRequest{Messages: chat(fmt.Sprintf("call %d", i)), Sampling: sp}, func(inference.Token) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		var call struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(res.Text), &call); err != nil {
			t.Fatalf("%q is not a call: %v", res.Text, err)
		}
		if val := vals[call.Name]; val == nil || i%2 == 1 && call.Name != "person" {
			t.Fatalf("%q calls %q", res.Text, call.Name)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(call.Arguments)))
		if err != nil {
			t.Fatal(err)
		}
		if err := vals[call.Name].Validate(inst); err != nil {
			t.Fatalf("%q: arguments invalid: %v", res.Text, err)
		}
	}
}
