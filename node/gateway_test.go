package node

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	topenai "github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
)

const testToken = "sk-tenzro-test-buyer"

// Tokens of a second buyer and of the gateway's operator (admin).
const (
	otherToken = "sk-tenzro-test-other-buyer"
	adminToken = "sk-tenzro-test-operator"
)

// testMarket starts a gateway with a funded buyer and n providers of the
// shared model, and waits until the gateway sees them all warm.
func testMarket(t testing.TB, n int) (*Node, []*Node) {
	t.Helper()
	dir, id := testModelDir(t)
	return testMarketServing(t, n, DevnetModel(dir, id))
}

// warmOffers counts gw's offers of model that are up and warm.
func warmOffers(gw *Node, model string) int {
	warm := 0
	for _, o := range gw.Table().Offers(model) {
		if o.Status == router.StatusUp && o.State == gossip.StateWarm {
			warm++
		}
	}
	return warm
}

// testMarketServing is testMarket with n providers serving m.
func testMarketServing(t testing.TB, n int, m ModelConfig) (*Node, []*Node) {
	t.Helper()
	net := nodetest.Build(t, nodetest.Spec{Gateways: 1, Providers: n}, func(t testing.TB, r nodetest.Role, _ int, boot []string) *Node {
		cfg := testConfig(t, Role(r), "software", boot)
		if r == nodetest.RoleGateway {
			cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000},
				{Account: "bob", TokenSHA256: TokenHash(otherToken), InitialCredit: 1_000}}
			cfg.API.AdminTokenSHA256 = TokenHash(adminToken)
		} else {
			cfg.Provider.Models = []ModelConfig{m}
		}
		return newNode(t, cfg)
	})
	gw, ps := net.Gateways[0], net.Providers
	nodetest.Eventually(t, 30*time.Second, "providers warm at the gateway", func() bool { return warmOffers(gw, m.Name) == n })
	return gw, ps
}

// TestGatewayRoutesWithTheOpenAISDK: the official SDK, stream and
// non-stream, through a gateway to real providers over libp2p; the answer
// carries the provider, a verified receipt and a payment record, and the
// buyer's balance falls by exactly the price.
func TestGatewayRoutesWithTheOpenAISDK(t *testing.T) {
	gw, _ := testMarket(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := sdkClient(gw, testToken)
	params := openai.ChatCompletionNewParams{
		Model:         DevnetModelName,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Write about the sea")},
		MaxTokens:     openai.Int(20),
		Seed:          openai.Int(3),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	before, _ := gw.store.Balance("alice")
	full, err := client.Chat.Completions.New(ctx, params, option.WithJSONSet("tenzro", map[string]any{"verification": "receipt"}))
	if err != nil {
		t.Fatal(err)
	}
	if full.Choices[0].Message.Content == "" || full.Model != DevnetModelName || full.Usage.CompletionTokens == 0 {
		t.Fatalf("completion: %+v", full)
	}
	var info struct {
		Tenzro topenai.TenzroInfo `json:"tenzro"`
	}
	if err := json.Unmarshal([]byte(full.RawJSON()), &info); err != nil {
		t.Fatal(err)
	}
	tz := info.Tenzro
	if tz.Provider.PeerID == "" || tz.Receipt == nil || !tz.Receipt.Verified || tz.Payment == nil {
		t.Fatalf("tenzro object: %s", full.RawJSON())
	}
	pay := tz.Payment.(map[string]any)
	price := uint64(pay["price"].(float64))
	after, _ := gw.store.Balance("alice")
	if price == 0 || before-after != price {
		t.Fatalf("balance %d → %d, price %d", before, after, price)
	}

	acc, _ := streamChat(t, ctx, client, params)
	if acc.Choices[0].Message.Content != full.Choices[0].Message.Content || acc.Usage.CompletionTokens != full.Usage.CompletionTokens {
		t.Fatalf("stream %q (%d tokens) != non-stream %q (%d)", acc.Choices[0].Message.Content, acc.Usage.CompletionTokens,
			full.Choices[0].Message.Content, full.Usage.CompletionTokens)
	}
	m := gw.gateway.Metrics().Snapshot()
	if m.RequestsRouted != 2 {
		t.Fatalf("metrics: %+v", m)
	}
}

func TestGatewayRefusesWithoutToken(t *testing.T) {
	gw, _ := testMarket(t, 1)
	for token, status := range map[string]int{"": 401, "sk-wrong": 401} {
		if code, _ := postChat(t, gw, token, `{"model":"tenzro-devnet","messages":[{"role":"user","content":"hi"}]}`); code != status {
			t.Fatalf("token %q: status %d", token, code)
		}
	}
}

// TestReceiptRPC: the gateway keeps the receipt of a routed request; the
// JSON-RPC methods return it verified, and a tampered envelope fails.
func TestReceiptRPC(t *testing.T) {
	gw, _ := testMarket(t, 1)
	body := `{"model":"tenzro-devnet","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`
	_, raw := postChat(t, gw, testToken, body)
	var out struct {
		Tenzro struct {
			Receipt struct {
				Envelope []byte
				Receipt  struct{ Nonce string }
			}
		}
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	nonce := out.Tenzro.Receipt.Receipt.Nonce
	got, err := gw.rpcCall("tenzro_getReceipt", `{"nonce":"`+nonce+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	rr := got.(gatewayapi.ReceiptResult)
	if !rr.Valid || rr.Stored == nil || !rr.Stored.Verified || rr.Receipt.Nonce != nonce {
		t.Fatalf("stored receipt: %+v", rr)
	}
	env := out.Tenzro.Receipt.Envelope
	env[len(env)/2] ^= 1
	got, err = gw.rpcCall("tenzro_verifyReceipt", `{"envelope":"`+base64.StdEncoding.EncodeToString(env)+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	if rr := got.(gatewayapi.ReceiptResult); rr.Valid || rr.Problem == "" {
		t.Fatalf("tampered receipt verified: %+v", rr)
	}
	if _, err := gw.rpcCall("tenzro_getReceipt", `{"nonce":"00"}`); err == nil {
		t.Fatal("bad nonce accepted")
	}
}
