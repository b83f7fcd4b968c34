package node

import (
	"context"
	"fmt"
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
// prompt, and a tool-calling round trip works (toolRoundTrip).
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
	toolRoundTrip(t, ctx, client, val)
}

// toolRoundTrip: with tool_choice "required" the embedded engine answers
// a call (OpenAI's shape, finish_reason tool_calls) whose arguments are
// valid under the function's schema, streamed and not alike; the call
// and the tool's answer go back as messages and get a text answer.
func toolRoundTrip(t *testing.T, ctx context.Context, client openai.Client, val *jsonschema.Schema) {
	params := openai.ChatCompletionNewParams{
		Model:      DevnetModelName,
		Messages:   []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Rate something with the tool.")},
		MaxTokens:  openai.Int(64),
		Seed:       openai.Int(3),
		ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "rate", Parameters: shared.FunctionParameters{"type": "object", "additionalProperties": false, "required": []string{"name", "score", "tags"},
				"properties": map[string]any{"name": map[string]any{"type": "string"}, "score": map[string]any{"type": "number"},
					"tags": map[string]any{"type": "array", "items": map[string]any{"enum": []string{"x", "y"}}}}}})},
	}
	full, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	c := full.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "rate" || c.Message.ToolCalls[0].ID == "" {
		t.Fatalf("a required tool call: %+v", c)
	}
	args := c.Message.ToolCalls[0].Function.Arguments
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		t.Fatalf("arguments %q: %v", args, err)
	}
	if err := val.Validate(inst); err != nil {
		t.Fatalf("arguments %q: %v", args, err)
	}
	acc, _ := streamChat(t, ctx, client, params)
	sc := acc.Choices[0]
	if sc.FinishReason != "tool_calls" || len(sc.Message.ToolCalls) != 1 || sc.Message.ToolCalls[0].Function.Arguments != args ||
		sc.Message.ToolCalls[0].Function.Name != "rate" {
		t.Fatalf("the streamed call %+v differs from %q", sc, args)
	}
	params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	params.Messages = append(params.Messages, c.Message.ToParam(), openai.ToolMessage("rated", c.Message.ToolCalls[0].ID))
	answer, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if a := answer.Choices[0]; len(a.Message.ToolCalls) != 0 || a.Message.Content == "" {
		t.Fatalf("the answer after the tool: %+v", a)
	}
}
