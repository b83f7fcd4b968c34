package node

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/node/rpc"
)

// TestRecentRequestsAndLatenciesRPC: a call through the gateway's OpenAI
// route is listed by tenzro_listRecentRequests with its provider, price
// and verified receipt, and its provider's latency sample by
// tenzro_getLatencies; bad params and a provider node get clear errors.
func TestRecentRequestsAndLatenciesRPC(t *testing.T) {
	gw, ps := testMarket(t, 1)
	body := `{"model":"tenzro-devnet","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`
	req, _ := http.NewRequest(http.MethodPost, gw.APIURL()+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: %d", resp.StatusCode)
	}
	got, err := gw.rpcCall("tenzro_listRecentRequests", `{"limit":10}`)
	if err != nil {
		t.Fatal(err)
	}
	rr := got.(RecentResult)
	prov := ps[0].Host().ID().String()
	if len(rr.Requests) != 1 || rr.Last != 1 || rr.Kept != 200 {
		t.Fatalf("recent %+v", rr)
	}
	if r := rr.Requests[0]; r.Provider != prov || !r.ReceiptVerified || r.Price == 0 || r.Nonce == "" || r.Attempts < 1 || r.Model != DevnetModelName {
		t.Fatalf("recent entry %+v", r)
	}
	if got, _ := gw.rpcCall("tenzro_listRecentRequests", `{"after":1}`); len(got.(RecentResult).Requests) != 0 || got.(RecentResult).Last != 1 {
		t.Fatalf("after the last: %+v", got)
	}
	lat, err := gw.rpcCall("tenzro_getLatencies", `{"provider":"`+prov+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	lr := lat.(LatencyResult)
	if len(lr.Providers) != 1 || len(lr.Providers[0].SamplesMs) != 1 || lr.Providers[0].P95Ms <= 0 ||
		lr.Providers[0].HedgeDelayMs < lr.HedgeMinMs || lr.Providers[0].HedgeDelayMs > lr.HedgeMaxMs {
		t.Fatalf("latencies %+v", lr)
	}
	for method, params := range map[string]string{
		"tenzro_listRecentRequests": `{"limit":201}`,
		"tenzro_getLatencies":       `{"provider":"not-a-peer"}`,
	} {
		var re *rpc.Error
		if _, err := gw.rpcCall(method, params); !errors.As(err, &re) || re.Code != rpc.CodeInvalidParams {
			t.Fatalf("%s %s: %v, want invalid params", method, params, err)
		}
	}
	var re *rpc.Error
	if _, err := ps[0].rpcCall("tenzro_listRecentRequests", ""); !errors.As(err, &re) || re.Code != rpc.CodeUnavailable {
		t.Fatalf("provider node: %v, want unavailable", err)
	}
}

// FuzzRecentParams: whatever params arrive, the decoders never panic and
// accept only a limit in range and a provider that is a peer ID.
func FuzzRecentParams(f *testing.F) {
	for _, s := range []string{``, `null`, `{"limit":5,"after":3}`, `{"limit":-1}`, `{"limit":1e9}`, `{"after":-1}`, `[]`,
		`{"provider":"12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"}`, `{"provider":""}`, `{"x":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if p, err := parseRecentParams([]byte(raw)); err == nil && (p.Limit < 0 || p.Limit > 200) {
			t.Fatalf("accepted limit %d", p.Limit)
		}
		if pid, err := parseLatencyParams([]byte(raw)); err == nil && pid != "" {
			if err := pid.Validate(); err != nil {
				t.Fatalf("accepted provider %q: %v", pid, err)
			}
		}
	})
}
