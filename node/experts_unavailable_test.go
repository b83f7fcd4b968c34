package node

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestMoEWithoutHoldersIsUnavailable: a provider serving a MoE model
// whose experts run at holders, with no holder to be found (as just after
// a restart), answers 503 experts_unavailable with a retry hint, on its
// own route and through a gateway: the provider cannot serve the call
// now, and the buyer did nothing wrong (it was a 400 generation_refused).
func TestMoEWithoutHoldersIsUnavailable(t *testing.T) {
	m := newDevnetMoE(t)
	sc := testConfig(t, RoleProvider, "software", nil)
	m.serve(&sc)
	sc.Provider.RemoteExperts.Timeout = time.Second
	serving := waitWarm(t, startNode(t, sc))
	gc := testConfig(t, RoleGateway, "software", []string{serving.Host().Addrs()[0]})
	gc.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
	gw := startNode(t, gc)
	nodetest.Eventually(t, 30*time.Second, "the MoE offer warm at the gateway", func() bool { return warmOffers(gw, provider.DevnetMoEModelName) >= 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	params := openai.ChatCompletionNewParams{
		Model:     provider.DevnetMoEModelName,
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Anyone holding experts?")},
		MaxTokens: openai.Int(4),
	}
	for _, via := range []struct {
		name string
		n    *Node
	}{{"the provider's own route", serving}, {"a gateway", gw}} {
		client := sdkClient(via.n, testToken)
		_, err := client.Chat.Completions.New(ctx, params)
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusServiceUnavailable || ae.Code != terms.CodeExpertsUnavailable {
			t.Fatalf("%s: a MoE call without holders: %v, want 503 %s", via.name, err, terms.CodeExpertsUnavailable)
		}
		if ra := ae.Response.Header.Get("Retry-After"); ra == "" {
			t.Errorf("%s: the 503 carries no Retry-After", via.name)
		}
	}
}
