package node

import (
	"errors"
	"net/http"
	"testing"

	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
)

// TestRecentRequestsAndLatenciesRPC: a call through the gateway's OpenAI
// route is listed by tenzro_listRecentRequests with its provider, price
// and verified receipt, and its provider's latency sample by
// tenzro_getLatencies; bad params and a provider node get clear errors.
func TestRecentRequestsAndLatenciesRPC(t *testing.T) {
	gw, ps := testMarket(t, 1)
	body := `{"model":"tenzro-devnet","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`
	if code, _ := postChat(t, gw, testToken, body); code != http.StatusOK {
		t.Fatalf("chat: %d", code)
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
		rr := got.(gatewayapi.RecentResult)
		if len(rr.Requests) != 1 || rr.Last != 1 || rr.Kept != 200 {
			t.Fatalf("recent %+v", rr)
		}
		if r := rr.Requests[0]; r.Provider != prov || !r.ReceiptVerified || r.Price == 0 || r.Nonce == "" || r.Attempts < 1 || r.Model != DevnetModelName {
			t.Fatalf("recent entry %+v", r)
		}
		if got, _ := gw.rpcCall("tenzro_listRecentRequests", `{"after":1}`); len(got.(gatewayapi.RecentResult).Requests) != 0 || got.(gatewayapi.RecentResult).Last != 1 {
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
		lr := lat.(gatewayapi.LatencyResult)
		if len(lr.Providers) != 1 || len(lr.Providers[0].SamplesMs) != 1 || lr.Providers[0].P95Ms <= 0 ||
			lr.Providers[0].HedgeDelayMs < lr.HedgeMinMs || lr.Providers[0].HedgeDelayMs > lr.HedgeMaxMs {
			t.Fatalf("latencies %+v", lr)
		}
		if all, _ := gw.rpcCall("tenzro_getLatencies", ``); len(all.(gatewayapi.LatencyResult).Providers) != 1 {
			t.Fatalf("every provider: %+v", all)
		}
		refused(t, gw, "tenzro_getLatencies", `{"provider":"not-a-peer"}`, rpc.CodeInvalidParams)
		refused(t, ps[0], "tenzro_getLatencies", ``, rpc.CodeUnavailable)
	})
}
