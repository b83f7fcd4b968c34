package node

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestMarketJSONSchemaAlwaysValid: through the gateway to the embedded
// engine of the random-weight devnet model, a json_schema request (the
// official SDK's shape) answers JSON valid under the schema for every
// prompt; a request with tools, which no provider announces, is a 503
// naming tools.
func TestMarketJSONSchemaAlwaysValid(t *testing.T) {
	gw, _ := testMarket(t, 1)
	schema := map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"name", "score", "tags"},
		"properties": map[string]any{
			"name":  map[string]any{"type": "string"},
			"score": map[string]any{"type": "number"},
			"tags":  map[string]any{"type": "array", "items": map[string]any{"enum": []string{"x", "y"}}},
		},
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"type":"object","additionalProperties":false,"required":["name","score","tags"],` +
		`"properties":{"name":{"type":"string"},"score":{"type":"number"},"tags":{"type":"array","items":{"enum":["x","y"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	val, err := comp.Compile("mem://s.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := sdkClient(gw, testToken)
	for i := range 20 {
		params := openai.ChatCompletionNewParams{
			Model:     DevnetModelName,
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("Rate thing %d, please.", i))},
			MaxTokens: openai.Int(48),
			Seed:      openai.Int(int64(i)),
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "rating", Schema: schema, Strict: openai.Bool(true)}}},
		}
		out, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatalf("prompt %d: %v", i, err)
		}
		text := out.Choices[0].Message.Content
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			t.Fatalf("prompt %d: %q is not JSON: %v", i, text, err)
		}
		if err := val.Validate(inst); err != nil {
			t.Fatalf("prompt %d: %q: %v", i, text, err)
		}
	}
	code, body := postChat(t, gw, testToken, `{"model":"`+DevnetModelName+`","messages":[{"role":"user","content":"hi"}],`+
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required"}`)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"param":"tools"`) {
		t.Fatalf("a tools request: %d %s, want a 503 naming tools", code, body)
	}
}
