package node

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router"
)

// TestProviderServesOpenAIRoutes drives a provider's own OpenAI routes with
// the official SDK: non-stream and stream agree token for token under the
// same seed, usage is counted, and the heartbeat reports the model warm.
func TestProviderServesOpenAIRoutes(t *testing.T) {
	v := startNode(t, testConfig(t, RoleValidator, "software", nil))
	p := startNode(t, testConfig(t, RoleProvider, "software", v.Host().Addrs()[:1]))
	_, modelID := testModelDir(t)
	nodetest.Eventually(t, 20*time.Second, "the provider's model warm at the validator", func() bool {
		pv, ok := v.Table().Get(p.Host().ID())
		return ok && pv.Status == router.StatusUp && len(pv.Models) == 1 && pv.Models[0].State == "warm" && pv.Models[0].ModelID == modelID
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := sdkClient(p, "unused")
	params := openai.ChatCompletionNewParams{
		Model:         DevnetModelName,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello there, how are you?")},
		MaxTokens:     openai.Int(24),
		Seed:          openai.Int(7),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	params.Temperature = openai.Float(0.8)

	full, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Choices) != 1 || full.Choices[0].Message.Content == "" || full.Model != DevnetModelName {
		t.Fatalf("completion: %+v", full)
	}
	if full.Usage.PromptTokens == 0 || full.Usage.CompletionTokens == 0 || full.Usage.CompletionTokens > 24 ||
		full.Usage.TotalTokens != full.Usage.PromptTokens+full.Usage.CompletionTokens {
		t.Fatalf("usage: %+v", full.Usage)
	}

	acc, chunks := streamChat(t, ctx, client, params)
	if chunks < 3 {
		t.Fatalf("only %d chunks", chunks)
	}
	if got := acc.Choices[0].Message.Content; got != full.Choices[0].Message.Content {
		t.Fatalf("stream %q != non-stream %q under the same seed", got, full.Choices[0].Message.Content)
	}
	if acc.Usage.CompletionTokens != full.Usage.CompletionTokens || acc.Choices[0].FinishReason != full.Choices[0].FinishReason {
		t.Fatalf("stream usage %+v finish %q; non-stream %+v %q", acc.Usage, acc.Choices[0].FinishReason, full.Usage, full.Choices[0].FinishReason)
	}

	comp, err := client.Completions.New(ctx, openai.CompletionNewParams{
		Model:     openai.CompletionNewParamsModel(DevnetModelName),
		Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
		MaxTokens: openai.Int(8),
	})
	if err != nil {
		t.Fatal(err)
	}
	if comp.Object != "text_completion" || comp.Usage.CompletionTokens == 0 || comp.Usage.CompletionTokens > 8 {
		t.Fatalf("text completion: %+v", comp)
	}

	models, err := client.Models.List(ctx)
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != DevnetModelName {
		t.Fatalf("models: %+v %v", models, err)
	}
}

func TestProviderRouteErrors(t *testing.T) {
	p := waitWarm(t, startNode(t, testConfig(t, RoleProvider, "software", nil)))
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"model":"nope","messages":[{"role":"user","content":"x"}]}`, 404, "model_not_found"},
		{`{"model":"tenzro-devnet","messages":[{"role":"user","content":"x"}],"n":2}`, 400, `"param":"n"`},
		{`{"model":"tenzro-devnet","messages":[]}`, 400, `"param":"messages"`},
		{`{"model":"tenzro-devnet","messages":[{"role":"wizard","content":"x"}]}`, 400, "wizard"},
		{`{"model":"tenzro-devnet","messages":[{"role":"user","content":"x"}],"temperature":9}`, 400, "temperature"},
		{`{"model":"tenzro-devnet","messages":"hi"}`, 400, "messages"},
		{`not json`, 400, "invalid JSON"},
	} {
		resp, err := http.Post(p.APIURL()+"/v1/chat/completions", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b := new(strings.Builder)
		_, _ = io.Copy(b, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(b.String(), c.want) || !strings.Contains(b.String(), `"error"`) {
			t.Errorf("%s: %d %s, want %d with %q", c.body, resp.StatusCode, b, c.status, c.want)
		}
	}
}
