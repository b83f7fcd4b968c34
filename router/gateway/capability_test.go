package gateway

import (
	"errors"
	"net/http"
	"testing"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestRoutesOnlyToCapableProviders: a request with a response format goes
// only to the provider announcing response_format, though it is not the
// cheapest; one with tools, which no provider announces, is a 503 naming
// tools and reaches nobody; a plain request goes to the cheapest.
func TestRoutesOnlyToCapableProviders(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 3, testConfig(), answer(ms, "{}"))
		m.announceOffer(m.provs[1], gossip.ModelOffer{ModelID: modelID, Name: modelName,
			RateCard: terms.RateCard{InputTokens: 1, OutputTokens: 11}, Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt},
			Params: []string{gossip.ParamResponseFormat}})
		req := request()
		req.Sampling.Format = &terms.ResponseFormat{Type: terms.FormatJSONObject}
		res := mustRoute(t, m, req)
		if cs := m.calls(); len(cs) != 1 || cs[0].peer != m.provs[1].id || res.Provider.PeerID != m.provs[1].id.String() {
			t.Fatalf("a response_format request went to %v, want only provider 1", peersOf(cs))
		}

		req = request()
		req.Sampling.Tools = []terms.Tool{{Name: "f"}}
		_, _, err := route(t, m, req)
		var ge *Error
		if !errors.As(err, &ge) || ge.Status != http.StatusServiceUnavailable || ge.Param != gossip.ParamTools || ge.Code != "unsupported_parameter" {
			t.Fatalf("a tools request no provider supports: %v, want a 503 naming tools", err)
		}
		if cs := m.calls(); len(cs) != 1 {
			t.Fatalf("the tools request reached %d providers", len(cs)-1)
		}

		mustRoute(t, m, request())
		if cs := m.calls(); len(cs) != 2 || cs[1].peer != m.provs[0].id {
			t.Fatalf("the plain request went to %v, want provider 0 (the cheapest)", peersOf(cs))
		}
	})
}
