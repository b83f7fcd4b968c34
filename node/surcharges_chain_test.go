package node

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// TestChainSurchargesQuotedAndBilled: on a chain whose surcharge_* params
// differ from the gateway's [router.surcharges], tenzro_quoteInference
// quotes and the signed payment record bills the chain's surcharge of the
// level, as tenzro_getParams shows it; the local figures are used nowhere.
func TestChainSurchargesQuotedAndBilled(t *testing.T) {
	params := testChainParams(3600)
	params.SurchargeNone, params.SurchargeReceipt, params.SurchargeOptimistic, params.SurchargeTEE = 3, 70, 900, 4000
	local := pricing.Surcharges{None: 1, Receipt: 2, Optimistic: 5, TEE: 20}
	net := newChainNet(t, 1, 1, 0, params, func(c *Config) {
		c.Router.Surcharges, c.Router.ProbeInterval = local, 0
	})
	gw, p := net.validators[0], net.registered[0]
	waitRegistered(t, gw, net.registered)

	res, err := gw.rpcCall("tenzro_getParams", "")
	if err != nil {
		t.Fatal(err)
	}
	var got ledger.Params
	js, _ := json.Marshal(res)
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatalf("tenzro_getParams %s: %v", js, err)
	}
	if got.SurchargeReceipt == local.Receipt || got.SurchargeNone == local.None {
		t.Fatalf("the chain's surcharges %s equal the local ones %+v: the test proves nothing", js, local)
	}

	for _, lv := range []terms.Verification{terms.VerifyNone, terms.VerifyReceipt} {
		want, _ := got.Surcharge(string(lv))
		res, err := gw.quote(t.Context(), fmt.Appendf(nil, `{"model":%q,"units":{"input_tokens":10,"output_tokens":4},"verification":%q}`, DevnetModelName, lv))
		if err != nil {
			t.Fatal(err)
		}
		lines := res.([]router.QuoteLine)
		if len(lines) != 1 || lines[0].Surcharge != want || lines[0].Price != lines[0].Breakdown.Base+want {
			t.Fatalf("quote at %s: %+v, want surcharge %d (tenzro_getParams)", lv, lines, want)
		}

		code, body := askPinned(t, gw, p, string(lv))
		if code != http.StatusOK {
			t.Fatalf("call at %s: %d %s", lv, code, body)
		}
		var resp struct {
			Tenzro struct {
				Payment struct {
					Breakdown terms.Breakdown `json:"breakdown"`
					Price     uint64          `json:"price"`
					Signed    *struct {
						Price uint64 `json:"price"`
					} `json:"signed"`
				} `json:"payment"`
			} `json:"tenzro"`
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("response %s: %v", body, err)
		}
		pay := resp.Tenzro.Payment
		if pay.Breakdown.Surcharge != want || pay.Price != pay.Breakdown.Base+want || pay.Signed == nil || pay.Signed.Price != pay.Price {
			t.Fatalf("bill at %s: %+v, want surcharge %d (tenzro_getParams) in the signed record", lv, pay, want)
		}
	}
}
