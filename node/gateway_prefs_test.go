package node

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	topenai "github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// TestGatewayHonoursOpenRouterProvider: the OpenAI SDK sends OpenRouter's
// `provider` object as an extra body field through a gateway to real
// providers over libp2p. ignore is obeyed (each provider ignored in turn,
// the other serves); the parameters the providers announce satisfy
// require_parameters with top_k; and a preference nobody meets is a 503
// whose tenzro.excluded names each provider and the preference; models
// falls back past a model nobody serves.
func TestGatewayHonoursOpenRouterProvider(t *testing.T) {
	gw, ps := testMarket(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := sdkClient(gw, testToken)
	params := openai.ChatCompletionNewParams{
		Model:     DevnetModelName,
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Write about the sea")},
		MaxTokens: openai.Int(4),
	}
	servedBy := func(prov map[string]any, extra ...option.RequestOption) string {
		t.Helper()
		res, err := client.Chat.Completions.New(ctx, params, append(extra, option.WithJSONSet("provider", prov))...)
		if err != nil {
			t.Fatalf("provider %v: %v", prov, err)
		}
		var info struct {
			Tenzro topenai.TenzroInfo `json:"tenzro"`
		}
		if err := json.Unmarshal([]byte(res.RawJSON()), &info); err != nil {
			t.Fatal(err)
		}
		return info.Tenzro.Provider.PeerID
	}
	ids := []string{ps[0].Host().ID().String(), ps[1].Host().ID().String()}
	for i := range ps {
		// An unknown field of OpenRouter's is ignored, as OpenRouter does.
		if got := servedBy(map[string]any{"ignore": []string{ids[i]}, "experimental": map[string]any{"x": 1}}); got != ids[1-i] {
			t.Fatalf("ignore %s: served by %s", ids[i], got)
		}
	}
	if got := servedBy(map[string]any{"require_parameters": true}, option.WithJSONSet("top_k", 5)); !slices.Contains(ids, got) {
		t.Fatalf("require_parameters with top_k: served by %q", got)
	}

	for _, c := range []struct{ prov, reason string }{
		{`{"ignore":["` + ids[0] + `","` + ids[1] + `"]}`, "ignore"},
		{`{"data_collection":"deny"}`, "data_collection"},
		{`{"quantizations":["int2"]}`, "quantizations"},
	} {
		code, body := postChat(t, gw, testToken, `{"model":"`+DevnetModelName+`","messages":[{"role":"user","content":"hi"}],"provider":`+c.prov+`}`)
		var got struct {
			Error  topenai.Error `json:"error"`
			Tenzro struct {
				Excluded []gateway.Exclusion `json:"excluded"`
			} `json:"tenzro"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		if code != http.StatusServiceUnavailable || len(got.Tenzro.Excluded) != 2 || !strings.Contains(got.Error.Message, c.reason) {
			t.Fatalf("%s: %d %s", c.prov, code, body)
		}
		for _, e := range got.Tenzro.Excluded {
			if !slices.Contains(ids, e.Provider) || !strings.HasPrefix(e.Reason, c.reason+":") {
				t.Fatalf("%s: excluded %+v", c.prov, got.Tenzro.Excluded)
			}
		}
	}
	// OpenRouter's models: a model nobody serves falls back to the next.
	fb := params
	fb.Model = "nobody-serves-this"
	res, err := client.Chat.Completions.New(ctx, fb, option.WithJSONSet("models", []string{"nobody-serves-this", DevnetModelName}))
	if err != nil || res.Model != DevnetModelName {
		t.Fatalf("models fallback: %v %+v", err, res)
	}
	// The same fields in tenzro; an unknown one there is a 400.
	if got := servedBy(nil, option.WithJSONSet("tenzro", map[string]any{"only": []string{ids[1]}})); got != ids[1] {
		t.Fatalf("tenzro.only: served by %s", got)
	}
	_, err = client.Chat.Completions.New(ctx, params, option.WithJSONSet("tenzro", map[string]any{"only": []string{ids[1]}, "bogus": 1}))
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		t.Fatalf("an unknown tenzro field: %v, want 400", err)
	}
}

// TestProviderAnnouncesFeatures: a provider announces the parameters its
// engine honours, the quantization of the weights it loaded and, when its
// operator sets no_retention, that claim; a gateway routes a
// data_collection "deny" request to it alone. A provider configured with a
// quantization its weights contradict never warms the model.
func TestProviderAnnouncesFeatures(t *testing.T) {
	dir, id := testModelDir(t)
	m := DevnetModel(dir, id)
	net := nodetest.Build(t, nodetest.Spec{Gateways: 1, Providers: 3}, func(t testing.TB, r nodetest.Role, i int, boot []string) *Node {
		cfg := testConfig(t, Role(r), "software", boot)
		if r == nodetest.RoleGateway {
			cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
			return newNode(t, cfg)
		}
		mc := m
		switch i {
		case 0:
			cfg.Provider.NoRetention = true
		case 2:
			mc.Quant = "q2_k" // not what the devnet weights are
		}
		cfg.Provider.Models = []ModelConfig{mc}
		return newNode(t, cfg)
	})
	gw, ps := net.Gateways[0], net.Providers
	nodetest.Eventually(t, 30*time.Second, "two providers warm at the gateway", func() bool { return warmOffers(gw, m.Name) == 2 })
	for _, o := range gw.Table().Offers(m.Name) {
		if o.Peer == ps[2].Host().ID() && o.State == gossip.StateWarm {
			t.Fatal("the provider whose configured quant contradicts its weights warmed the model")
		}
		if o.Model.Quant == "" || !slices.Equal(o.Model.Params, []string{"logprobs", "response_format", "seed", "stop", "tools", "top_k"}) ||
			o.NoRetention != (o.Peer == ps[0].Host().ID()) {
			t.Fatalf("offer of %s: quant %q params %v no_retention %v", o.Peer, o.Model.Quant, o.Model.Params, o.NoRetention)
		}
	}
	code, body := postChat(t, gw, testToken, `{"model":"`+DevnetModelName+`","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"provider":{"data_collection":"deny"}}`)
	var got struct {
		Tenzro topenai.TenzroInfo `json:"tenzro"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != http.StatusOK || got.Tenzro.Provider.PeerID != ps[0].Host().ID().String() {
		t.Fatalf("data_collection deny: %d %s", code, body)
	}
}
