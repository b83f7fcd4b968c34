package node

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// TestQuoteInference: two providers of one model with different rate
// cards; the gateway quotes both, cheapest first, with the governed
// surcharge, and leaves out a provider that does not offer the level.
func TestQuoteInference(t *testing.T) {
	gw := startNode(t, testConfig(t, RoleGateway, "software", nil))
	boot := gw.Host().Addrs()[:1]
	cheap := testConfig(t, RoleProvider, "software", boot)
	cheap.Provider.Models[0].RateCard = terms.RateCard{InputTokens: 1, OutputTokens: 3, Minimum: 50}
	cheap.Provider.Models[0].Verification = []terms.Verification{"none", "receipt"}
	dear := testConfig(t, RoleProvider, "software", boot)
	dear.Provider.Models[0].RateCard = terms.RateCard{InputTokens: 2, OutputTokens: 5, Minimum: 0}
	dear.Provider.Models[0].Verification = []terms.Verification{"none", "receipt", "optimistic"}
	pc, pd := startNode(t, cheap), startNode(t, dear)
	nodetest.Eventually(t, 20*time.Second, "both providers warm at the gateway", func() bool { return warmOffers(gw, DevnetModelName) == 2 })

	res, err := gw.quote(t.Context(), []byte(`{"model":"tenzro-devnet","units":{"input_tokens":100,"output_tokens":200},"verification":"receipt"}`))
	if err != nil {
		t.Fatal(err)
	}
	lines := res.([]router.QuoteLine)
	if len(lines) != 2 || lines[0].Provider != pc.Host().ID().String() || lines[1].Provider != pd.Host().ID().String() {
		t.Fatalf("order: %+v", lines)
	}
	surcharge := gw.cfg.Router.Surcharges.Receipt
	if lines[0].Price != 100*1+200*3+surcharge || lines[1].Price != 100*2+200*5+surcharge || lines[0].Surcharge != surcharge {
		t.Fatalf("prices %d, %d (surcharge %d)", lines[0].Price, lines[1].Price, surcharge)
	}
	if lines[0].Region != "DE" || lines[0].Capacity != 4 || lines[0].Digest == lines[1].Digest {
		t.Fatalf("quote fields: %+v", lines[0])
	}

	res, err = gw.quote(t.Context(), []byte(`{"model":"tenzro-devnet","units":{"input_tokens":1},"verification":"optimistic"}`))
	if err != nil {
		t.Fatal(err)
	}
	if lines := res.([]router.QuoteLine); len(lines) != 1 || lines[0].Provider != pd.Host().ID().String() {
		t.Fatalf("optimistic quotes: %+v", lines)
	}
	res, _ = gw.quote(t.Context(), []byte(`{"model":"tenzro-devnet","units":{"output_tokens":1},"verification":"none"}`))
	// One output token: 5 at the dear card, but the cheap card's minimum
	// of 50 applies, so the order flips.
	if lines := res.([]router.QuoteLine); len(lines) != 2 || lines[0].Price != 5 || lines[1].Price != 50 ||
		lines[1].Provider != pc.Host().ID().String() || lines[1].Breakdown.Usage != 3 {
		t.Fatalf("minimum not applied: %+v", lines)
	}
	if _, err := gw.quote(t.Context(), []byte(`{"model":"tenzro-devnet","verification":"blind"}`)); err == nil {
		t.Fatal("unknown level accepted")
	}
}
