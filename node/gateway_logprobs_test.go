package node

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router"

	"github.com/openai/openai-go/v3"
)

// TestGatewayRelaysLogProbs: log-probs asked of a gateway come back, stream
// and non-stream, exactly as the provider's own route gives them for the
// same seeded request — tokens, bytes, values and alternatives.
func TestGatewayRelaysLogProbs(t *testing.T) {
	gw, ps := testMarket(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	params := openai.ChatCompletionNewParams{
		Model:       DevnetModelName,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me about rivers")},
		MaxTokens:   openai.Int(12),
		Seed:        openai.Int(5),
		Temperature: openai.Float(0.9),
		Logprobs:    openai.Bool(true),
		TopLogprobs: openai.Int(3),
	}
	direct := sdkClient(ps[0], "unused")
	routed := sdkClient(gw, testToken)

	want, err := direct.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	wantLP := logProbsOf(want.Choices[0].Logprobs.Content)
	if len(wantLP) != int(want.Usage.CompletionTokens) || len(wantLP) == 0 || len(wantLP[0].Top) != 3 {
		t.Fatalf("provider's own route: %d log-prob entries for %d tokens: %+v", len(wantLP), want.Usage.CompletionTokens, wantLP)
	}
	got, err := routed.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != want.Choices[0].Message.Content {
		t.Fatalf("text through the gateway %q, provider's own %q", got.Choices[0].Message.Content, want.Choices[0].Message.Content)
	}
	if g := logProbsOf(got.Choices[0].Logprobs.Content); !reflect.DeepEqual(g, wantLP) {
		t.Fatalf("log-probs through the gateway:\n%+v\nprovider's own:\n%+v", g, wantLP)
	}

	stream := routed.Chat.Completions.NewStreaming(ctx, params)
	var streamed []tokenLP
	var text string
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			text += c.Delta.Content
			streamed = append(streamed, logProbsOf(c.Logprobs.Content)...)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text != want.Choices[0].Message.Content || !reflect.DeepEqual(streamed, wantLP) {
		t.Fatalf("streamed through the gateway %q with log-probs\n%+v\nwant %q with\n%+v", text, streamed, want.Choices[0].Message.Content, wantLP)
	}
}

type tokenLP struct {
	Token   string
	LogProb float64
	Bytes   []int64
	Top     []tokenLP
}

func logProbsOf(in []openai.ChatCompletionTokenLogprob) []tokenLP {
	var out []tokenLP
	for _, c := range in {
		e := tokenLP{Token: c.Token, LogProb: c.Logprob, Bytes: c.Bytes}
		for _, a := range c.TopLogprobs {
			e.Top = append(e.Top, tokenLP{Token: a.Token, LogProb: a.Logprob, Bytes: a.Bytes})
		}
		out = append(out, e)
	}
	return out
}

// TestGatewayRelaysUpstreamLogProbs: the same through a gateway to a
// provider that fronts an upstream engine (here another provider's own
// route): the log-probs the upstream gave arrive at the buyer.
func TestGatewayRelaysUpstreamLogProbs(t *testing.T) {
	direct := waitWarm(t, startNode(t, testConfig(t, RoleProvider, "software", nil)))
	cfg := testConfig(t, RoleGateway, "software", nil)
	cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
	gw := startNode(t, cfg)
	_, id := testModelDir(t)
	upstreamProvider(t, direct.APIURL()+"/v1", id, gw.Host().Addrs()[0])
	nodetest.Eventually(t, 30*time.Second, "the fronting provider warm at the gateway", func() bool {
		os := gw.Table().Offers("fronted")
		return len(os) == 1 && os[0].Status == router.StatusUp && os[0].State == gossip.StateWarm
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	params := openai.ChatCompletionNewParams{
		Model:       DevnetModelName,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story")},
		MaxTokens:   openai.Int(10),
		Seed:        openai.Int(42),
		Logprobs:    openai.Bool(true),
		TopLogprobs: openai.Int(2),
	}
	dc := sdkClient(direct, "x")
	want, err := dc.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	params.Model = "fronted"
	gc := sdkClient(gw, testToken)
	got, err := gc.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	w, g := logProbsOf(want.Choices[0].Logprobs.Content), logProbsOf(got.Choices[0].Logprobs.Content)
	if got.Choices[0].Message.Content != want.Choices[0].Message.Content || len(w) == 0 || !reflect.DeepEqual(g, w) {
		t.Fatalf("through gateway and upstream %q with\n%+v\ndirect %q with\n%+v", got.Choices[0].Message.Content, g, want.Choices[0].Message.Content, w)
	}
}
