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
	prov := ps[0].Host().ID().String()
	refused := func(t *testing.T, n *Node, method, params string, code int) {
		t.Helper()
		var re *rpc.Error
		if _, err := n.rpcCall(method, params); !errors.As(err, &re) || re.Code != code {
			t.Fatalf("%s %s: %v, want code %d", method, params, err, code)
		}
	}
	t.Run("tenzro_listRecentRequests", func(t *testing.T) {
		got, err := gw.rpcCall("tenzro_listRecentRequests", `{"limit":10}`)
		if err != nil {
			t.Fatal(err)
		}
		rr := got.(RecentResult)
		if len(rr.Requests) != 1 || rr.Last != 1 || rr.Kept != 200 {
			t.Fatalf("recent %+v", rr)
		}
		if r := rr.Requests[0]; r.Provider != prov || !r.ReceiptVerified || r.Price == 0 || r.Nonce == "" || r.Attempts < 1 || r.Model != DevnetModelName {
			t.Fatalf("recent entry %+v", r)
		}
		if got, _ := gw.rpcCall("tenzro_listRecentRequests", `{"after":1}`); len(got.(RecentResult).Requests) != 0 || got.(RecentResult).Last != 1 {
			t.Fatalf("after the last: %+v", got)
		}
		refused(t, gw, "tenzro_listRecentRequests", `{"limit":201}`, rpc.CodeInvalidParams)
		refused(t, gw, "tenzro_listRecentRequests", `{"limit":"ten"}`, rpc.CodeInvalidParams)
		refused(t, ps[0], "tenzro_listRecentRequests", ``, rpc.CodeUnavailable)
	})
	t.Run("tenzro_getLatencies", func(t *testing.T) {
		lat, err := gw.rpcCall("tenzro_getLatencies", `{"provider":"`+prov+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		lr := lat.(LatencyResult)
		if len(lr.Providers) != 1 || len(lr.Providers[0].SamplesMs) != 1 || lr.Providers[0].P95Ms <= 0 ||
			lr.Providers[0].HedgeDelayMs < lr.HedgeMinMs || lr.Providers[0].HedgeDelayMs > lr.HedgeMaxMs {
			t.Fatalf("latencies %+v", lr)
		}
		if all, _ := gw.rpcCall("tenzro_getLatencies", ``); len(all.(LatencyResult).Providers) != 1 {
			t.Fatalf("every provider: %+v", all)
		}
		refused(t, gw, "tenzro_getLatencies", `{"provider":"not-a-peer"}`, rpc.CodeInvalidParams)
		refused(t, ps[0], "tenzro_getLatencies", ``, rpc.CodeUnavailable)
	})
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
