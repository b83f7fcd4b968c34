package node

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/buyerkeys"
)

// keyCallPrice is what every call costs at the budget tests' provider: a
// flat minimum, so a call's worst case is its price and a budget covers
// an exact number of calls.
const keyCallPrice = 1_000

// keysMarket starts a gateway whose buyer alice may run 64 calls at once,
// with one provider charging keyCallPrice a call.
func keysMarket(t *testing.T) (*Node, Config) {
	t.Helper()
	dir, id := testModelDir(t)
	m := DevnetModel(dir, id)
	m.RateCard = terms.RateCard{Minimum: keyCallPrice}
	var gwCfg Config
	net := nodetest.Build(t, nodetest.Spec{Gateways: 1, Providers: 1}, func(t testing.TB, r nodetest.Role, _ int, boot []string) *Node {
		cfg := testConfig(t, Role(r), "software", boot)
		if r == nodetest.RoleGateway {
			alice := BuyerConfig{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}
			alice.MaxConcurrent, alice.RatePerMinute = 64, 60_000
			cfg.Router.Buyers = []BuyerConfig{alice, {Account: "bob", TokenSHA256: TokenHash(otherToken), InitialCredit: 1_000}}
			cfg.API.AdminTokenSHA256 = TokenHash(adminToken)
			gwCfg = cfg
		} else {
			cfg.Provider.Models = []ModelConfig{m}
		}
		return newNode(t, cfg)
	})
	gw := net.Gateways[0]
	nodetest.Eventually(t, 30*time.Second, "provider warm at the gateway", func() bool { return warmOffers(gw, m.Name) == 1 })
	return gw, gwCfg
}

// keysRPC is rpcAs with params marshalled from a value; it returns the
// error's message, "" for none.
func keysRPC(t *testing.T, n *Node, token, method string, params any, out any) string {
	t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	if e := rpcAs(t, n.APIURL(), token, method, string(p), out); e != nil {
		return e.Message
	}
	return ""
}

// chatStatus posts one chat call as token from any goroutine.
func chatStatus(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions",
		strings.NewReader(`{"model":"tenzro-devnet","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestKeysBudgetThroughGateway: a key made at run time over RPC (the
// operator's token, or the payer's own token for its keys) with a budget of ten calls gets exactly ten of
// 50 concurrent calls through a real gateway to a real provider, the rest
// 402 budget_exceeded before any provider is called; GET /v1/key and
// tenzro_getBuyerUsage show the spend per model and provider; the spend
// survives a restart of the gateway; a revoked key is refused on its
// next request.
func TestKeysBudgetThroughGateway(t *testing.T) {
	gw, cfg := keysMarket(t)
	params := map[string]any{"payer": "alice", "label": "ci", "max_budget": 10 * keyCallPrice, "budget_duration": "30d"}
	if msg := keysRPC(t, gw, otherToken, "tenzro_createBuyerKey", params, nil); !strings.Contains(msg, "paid by that payer only") {
		t.Fatalf("bob created a key paid by alice: %q", msg)
	}
	var own buyerkeys.Created
	if msg := keysRPC(t, gw, testToken, "tenzro_createBuyerKey", map[string]any{"label": "alice's own"}, &own); msg != "" ||
		own.Key.Payer != "alice" {
		t.Fatalf("alice's token making a key of hers: %q %+v", msg, own.Key)
	}
	if msg := keysRPC(t, gw, own.Token, "tenzro_createBuyerKey", map[string]any{}, nil); !strings.Contains(msg, "admin token") {
		t.Fatalf("a run-time key made a key: %q", msg)
	}
	var made buyerkeys.Created
	if msg := keysRPC(t, gw, adminToken, "tenzro_createBuyerKey", params, &made); msg != "" || made.Token == "" {
		t.Fatalf("create: %s %+v", msg, made)
	}

	codes := make([]int, 50)
	bodies := make([]string, 50)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			var err error
			if codes[i], bodies[i], err = chatStatus(gw.APIURL(), made.Token); err != nil {
				bodies[i] = err.Error()
			}
		})
	}
	wg.Wait()
	served := 0
	for i, c := range codes {
		switch {
		case c == http.StatusOK:
			served++
		case c != http.StatusPaymentRequired || !strings.Contains(bodies[i], `"budget_exceeded"`):
			t.Fatalf("call %d: %d %s", i, c, bodies[i])
		}
	}
	if served != 10 {
		t.Fatalf("%d of 50 concurrent calls served, the budget covers 10", served)
	}
	code, body, err := chatStatus(gw.APIURL(), made.Token)
	if err != nil || code != http.StatusPaymentRequired || !strings.Contains(body, "budget of 10000") || !strings.Contains(body, "resets 20") {
		t.Fatalf("over budget: %d %s %v", code, body, err)
	}
	checkKeyUsage(t, gw, made)

	// The gateway restarts on the same home: the spend is intact.
	ctx, cancel := context.WithTimeout(context.Background(), nodetest.StopTimeout)
	defer cancel()
	if err := gw.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	gw2 := nodetest.Start(t, "gateway", newNode(t, cfg))
	checkKeyUsage(t, gw2, made)
	if code, body, _ := chatStatus(gw2.APIURL(), made.Token); code != http.StatusPaymentRequired || !strings.Contains(body, "budget_exceeded") {
		t.Fatalf("over budget after a restart: %d %s", code, body)
	}
	if msg := keysRPC(t, gw2, adminToken, "tenzro_revokeBuyerKey", map[string]string{"id": made.Key.ID}, nil); msg != "" {
		t.Fatal(msg)
	}
	if code, _, _ := chatStatus(gw2.APIURL(), made.Token); code != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d", code)
	}
}

// checkKeyUsage: the key's spend, as GET /v1/key and tenzro_getBuyerUsage
// show it, is its ten calls.
func checkKeyUsage(t *testing.T, gw *Node, made buyerkeys.Created) {
	t.Helper()
	code, body := send(t, gw.APIURL()+"/v1/key", made.Token, "")
	var info struct {
		Data struct {
			Label          string
			Usage          uint64
			Limit          *uint64
			LimitRemaining *uint64 `json:"limit_remaining"`
			LimitReset     *string `json:"limit_reset"`
		}
	}
	if err := json.Unmarshal([]byte(body), &info); err != nil || code != http.StatusOK {
		t.Fatalf("GET /v1/key: %d %s", code, body)
	}
	d := info.Data
	if d.Label != "ci" || d.Usage != 10*keyCallPrice || d.Limit == nil || *d.Limit != 10*keyCallPrice ||
		d.LimitRemaining == nil || *d.LimitRemaining != 0 || d.LimitReset == nil || *d.LimitReset != "30d" {
		t.Fatalf("GET /v1/key: %s", body)
	}
	for _, tok := range []string{adminToken, made.Token, testToken} {
		var u buyerkeys.Usage
		if msg := keysRPC(t, gw, tok, "tenzro_getBuyerUsage", map[string]string{"key": made.Key.ID}, &u); msg != "" {
			t.Fatal(msg)
		}
		// The calls may straddle a UTC midnight: two days then.
		var model, provider buyerkeys.Tally
		for _, d := range u.Days {
			model.Calls += d.Models[DevnetModelName].Calls
			for _, p := range d.Providers {
				provider.Calls += p.Calls
				provider.Amount += p.Amount
			}
		}
		if u.Spent != 10*keyCallPrice || u.Calls != 10 || model.Calls != 10 || provider != (buyerkeys.Tally{Amount: 10 * keyCallPrice, Calls: 10}) ||
			u.Models[DevnetModelName] != provider || len(u.Providers) != 1 {
			t.Fatalf("usage as %s: %+v", tok, u)
		}
	}
	if msg := keysRPC(t, gw, otherToken, "tenzro_getBuyerUsage", map[string]string{"key": made.Key.ID}, nil); msg == "" {
		t.Fatal("another buyer read the key's usage")
	}
}

// TestKeysLimitsThroughGateway: a max_per_request below every provider's
// price leaves none to call; the key's rate answers 429 with the
// gateway's code and a Retry-After; update lifts both on the next
// request; a model the key is not allowed is 403.
func TestKeysLimitsThroughGateway(t *testing.T) {
	gw, _ := keysMarket(t)
	var made buyerkeys.Created
	params := map[string]any{"payer": "alice", "rate_per_minute": 1, "max_per_request": keyCallPrice - 1}
	if msg := keysRPC(t, gw, adminToken, "tenzro_createBuyerKey", params, &made); msg != "" {
		t.Fatal(msg)
	}
	code, body, err := chatStatus(gw.APIURL(), made.Token)
	if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(body, "no_provider") {
		t.Fatalf("under max_per_request %d: %d %s %v", keyCallPrice-1, code, body, err)
	}
	req, _ := http.NewRequest(http.MethodPost, gw.APIURL()+"/v1/chat/completions",
		strings.NewReader(`{"model":"tenzro-devnet","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`))
	req.Header.Set("Authorization", "Bearer "+made.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "rate_limit_exceeded") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a second call at a rate of 1 a minute: %d %s (Retry-After %q)", resp.StatusCode, b, resp.Header.Get("Retry-After"))
	}
	settings := map[string]any{"id": made.Key.ID, "models": []string{DevnetModelName}}
	if msg := keysRPC(t, gw, adminToken, "tenzro_updateBuyerKey", settings, nil); msg != "" {
		t.Fatal(msg)
	}
	if code, body, err := chatStatus(gw.APIURL(), made.Token); err != nil || code != http.StatusOK {
		t.Fatalf("after the update (no rate, no cap): %d %s %v", code, body, err)
	}
	settings["models"] = []string{"another-model"}
	if msg := keysRPC(t, gw, adminToken, "tenzro_updateBuyerKey", settings, nil); msg != "" {
		t.Fatal(msg)
	}
	if code, body, _ := chatStatus(gw.APIURL(), made.Token); code != http.StatusForbidden || !strings.Contains(body, "model_not_allowed") {
		t.Fatalf("a model the key may not call: %d %s", code, body)
	}
}
