package node

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/router/breaker"
)

// TestAbuseOversizedRequestsAreTheBuyers: 600 requests that break the
// infer protocol's limits (257 messages, max_tokens 2^20+1, top_k
// 2^63-1) are each a 400 naming the field, and leave every provider's
// breaker closed with no failure counted, so honest calls keep being
// served.
func TestAbuseOversizedRequestsAreTheBuyers(t *testing.T) {
	gw, ps := testMarket(t, 2)
	msgs := strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"x"},`, 257), ",")
	bad := []struct{ field, body string }{
		{"messages", fmt.Sprintf(`{"model":%q,"messages":[%s],"max_tokens":4}`, DevnetModelName, msgs)},
		{"max_tokens", fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"x"}],"max_tokens":%d}`, DevnetModelName, 1<<20+1)},
		{"top_k", fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"x"}],"max_tokens":4,"top_k":%d}`, DevnetModelName, int64(1<<63-1))},
	}
	post := func(body string) (int, string) { return postChat(t, gw, testToken, body) }
	for i := range 600 {
		b := bad[i%len(bad)]
		if code, body := post(b.body); code != http.StatusBadRequest || !strings.Contains(body, b.field) {
			t.Fatalf("request %d (%s): %d %s", i, b.field, code, clip(body))
		}
	}
	for _, p := range ps {
		id := p.Host().ID()
		if s, ok := gw.gateway.Breakers()[id]; ok && (s.State != breaker.Closed || s.ConsecutiveFailures != 0) {
			t.Fatalf("breaker of %s after the buyer's faults: %+v", id, s)
		}
		if c := gw.gateway.Metrics().Snapshot().Providers[id.String()]; c != nil && c.Failures != 0 {
			t.Fatalf("%d failures counted against %s", c.Failures, id)
		}
	}
	for i := range 4 {
		if code, body := post(fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hello %d"}],"max_tokens":4}`, DevnetModelName, i)); code != http.StatusOK {
			t.Fatalf("honest call %d after the flood: %d %s", i, code, clip(body))
		}
	}
}
