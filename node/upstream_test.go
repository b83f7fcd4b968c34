package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// upstreamProvider starts a provider that fronts baseURL as an upstream
// engine serving model id.
func upstreamProvider(t *testing.T, baseURL, id string, bootstrap ...string) *Node {
	t.Helper()
	cfg := testConfig(t, RoleProvider, "software", bootstrap)
	cfg.Provider.Models = []ModelConfig{{Name: "fronted", Engine: EngineUpstream, ID: id,
		UpstreamURL: baseURL, UpstreamModel: DevnetModelName, Verification: []terms.Verification{"none", "receipt"}}}
	return waitWarm(t, startNode(t, cfg))
}

// waitWarm waits until every model of provider n is warm.
func waitWarm(t *testing.T, n *Node) *Node {
	t.Helper()
	nodetest.Eventually(t, 20*time.Second, "models warm", func() bool { return n.Provider().Warm() })
	return n
}

// TestUpstreamFrontsAnotherProvider uses a tenzrod provider's own OpenAI
// route as the upstream of a second provider: the fronted answer equals the
// direct one under the same seed, stream and non-stream, log-probs included.
func TestUpstreamFrontsAnotherProvider(t *testing.T) {
	direct := waitWarm(t, startNode(t, testConfig(t, RoleProvider, "software", nil)))
	_, id := testModelDir(t)
	fronted := upstreamProvider(t, direct.APIURL()+"/v1", id)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	params := openai.ChatCompletionNewParams{
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story")},
		MaxTokens:   openai.Int(16),
		Seed:        openai.Int(42),
		Logprobs:    openai.Bool(true),
		TopLogprobs: openai.Int(3),
	}
	call := func(n *Node, model string, stream bool) (string, []openai.ChatCompletionTokenLogprob) {
		c := sdkClient(n, "x")
		p := params
		p.Model = model
		if !stream {
			r, err := c.Chat.Completions.New(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			return r.Choices[0].Message.Content, r.Choices[0].Logprobs.Content
		}
		acc, _ := streamChat(t, ctx, c, p)
		return acc.Choices[0].Message.Content, acc.Choices[0].Logprobs.Content
	}
	want, wantLP := call(direct, DevnetModelName, false)
	for _, stream := range []bool{false, true} {
		got, gotLP := call(fronted, "fronted", stream)
		if got != want {
			t.Fatalf("stream=%v: fronted %q, direct %q", stream, got, want)
		}
		if len(gotLP) != len(wantLP) || len(gotLP) == 0 || gotLP[0].Token != wantLP[0].Token || len(gotLP[0].TopLogprobs) != 3 {
			t.Fatalf("stream=%v: log-probs not relayed: %d vs %d", stream, len(gotLP), len(wantLP))
		}
	}
}

// misbehavingUpstream is a fake engine outside the system: it answers
// every request the way the given function says.
func misbehavingUpstream(t *testing.T, fn func(w http.ResponseWriter)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if engineHealthCheck(w, r) {
			return
		}
		fn(w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// engineHealthCheck answers the provider's health check (GET /v1/models)
// the way a live engine does, whatever the fake does with completions.
func engineHealthCheck(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/models") {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"object":"list","data":[{"id":"fake","object":"model"}]}`)
	return true
}

func sseChunk(text string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", text, fr)
}

func TestUpstreamFaultsReachTheBuyer(t *testing.T) {
	_, id := testModelDir(t)
	noLogProbs := misbehavingUpstream(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("hello", ""), sseChunk("", "stop"), "data: [DONE]\n\n")
	})
	contextLength := misbehavingUpstream(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"This model's maximum context length is 2048 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	})
	overloaded := misbehavingUpstream(t, func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(429)
		fmt.Fprint(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
	})
	cut := misbehavingUpstream(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("half an ans", ""))
	})
	cases := []struct {
		name, url, body string
		status          int
		want            []string
	}{
		{"optimistic is refused, never answered at a lower level", noLogProbs, `"tenzro":{"verification":"optimistic"}`, 400, []string{"commitments_unavailable"}},
		{"no log-probs is fine when none are needed", noLogProbs, `"tenzro":{"verification":"none"}`, 200, []string{`"content":"hello"`}},
		{"context length passes through", contextLength, `"tenzro":{}`, 400, []string{"context_length_exceeded", "maximum context length"}},
		{"429 keeps Retry-After", overloaded, `"tenzro":{}`, 429, []string{"slow down"}},
		{"cut stream is an error, not an answer", cut, `"tenzro":{}`, 502, []string{"before the answer was complete"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := upstreamProvider(t, c.url, id)
			body := `{"model":"fronted","messages":[{"role":"user","content":"hi"}],` + c.body + `}`
			resp, err := http.Post(p.APIURL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, c.status)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Fatalf("body %s lacks %q", b, w)
				}
			}
			if c.status == 429 && resp.Header.Get("Retry-After") != "7" {
				t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
		})
	}
}
