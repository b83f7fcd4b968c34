package node

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router/gateway"
)

const bobToken = "sk-tenzro-test-bob"

// TestAbuseFloodLeavesOthersServed: 500 concurrent streams from one
// buyer's token (held to max_concurrent 2: with its hedges at most 4 of
// the providers' 8 slots; the rest answered 429 naming the limit) leave a
// second buyer's calls succeeding within their deadline.
func TestAbuseFloodLeavesOthersServed(t *testing.T) {
	dir, id := testModelDir(t)
	cfg := testConfig(t, RoleGateway, "software", nil)
	cfg.Router.Buyers = []BuyerConfig{
		{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 100_000_000, BuyerLimits: gateway.BuyerLimits{MaxConcurrent: 2}},
		{Account: "bob", TokenSHA256: TokenHash(bobToken), InitialCredit: 1_000_000},
	}
	gw := startNode(t, cfg)
	for range 2 {
		pc := testConfig(t, RoleProvider, "software", gw.Host().Addrs()[:1])
		pc.Provider.Models = []ModelConfig{DevnetModel(dir, id)}
		startNode(t, pc)
	}
	nodetest.Eventually(t, 30*time.Second, "providers warm at the gateway", func() bool { return warmOffers(gw, DevnetModelName) == 2 })
	// Every client its own loopback source address: the intake's cap on
	// connections per address must not be what holds the flood back (a
	// flood with one token can come from many addresses).
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 200}}
	}
	bobClient := from("127.0.0.2")
	floodClients := []*http.Client{from("127.0.0.10"), from("127.0.0.11"), from("127.0.0.12"), from("127.0.0.13"), from("127.0.0.14")}
	post := func(ctx context.Context, client *http.Client, token string, stream bool) (int, string, error) {
		body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Tell me about the sea"}],"max_tokens":8,"stream":%v}`,
			DevnetModelName, stream)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.APIURL()+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw), err
	}

	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var served, refused, other atomic.Int64
	var sample atomic.Value
	for i := range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				code, body, err := post(ctx, floodClients[i%len(floodClients)], testToken, true)
				switch {
				case err != nil:
				case code == http.StatusOK:
					served.Add(1)
				case code == http.StatusTooManyRequests:
					refused.Add(1)
					sample.Store(body)
					select { // a flood that at least honours Retry-After
					case <-time.After(time.Second):
					case <-ctx.Done():
					}
				default:
					other.Add(1)
					sample.Store(body)
				}
			}
		}()
	}
	nodetest.Eventually(t, 10*time.Second, "the flood refused", func() bool { return refused.Load() > 100 })
	var took []time.Duration
	for i := range 2 {
		rctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		start := time.Now()
		code, body, err := post(rctx, bobClient, bobToken, i%2 == 0)
		cancel()
		if err != nil || code != http.StatusOK || !strings.Contains(body, "content") {
			stop()
			wg.Wait()
			t.Fatalf("bob's call %d during the flood: %d %v %.300s (after %v)", i, code, err, body, time.Since(start))
		}
		took = append(took, time.Since(start).Round(time.Millisecond))
	}
	stop()
	wg.Wait()
	s, _ := sample.Load().(string)
	if served.Load() == 0 || other.Load() != 0 || !strings.Contains(s, "max_concurrent") && !strings.Contains(s, "rate_per_minute") {
		t.Fatalf("flood: %d served, %d refused, %d other; last refusal %.300s", served.Load(), refused.Load(), other.Load(), s)
	}
	t.Logf("flood: %d served, %d refused; bob's calls took %v", served.Load(), refused.Load(), took)
}
