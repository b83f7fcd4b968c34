package node

import (
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricefeed"
)

// TestPriceFeedAttestedOnChain: two validator nodes on a real chain probe
// the registered provider every second; each signs and gossips what it
// measured, both admit the other's observations against consensus state,
// and the provider's entry becomes attested by two validators, with the
// provider's claims beside it and the gauges on /metrics.
//
// The second provider fronts an engine that serves only chat: probes are
// chat requests, so they succeed there too and its entry is attested.
func TestPriceFeedAttestedOnChain(t *testing.T) {
	chatOnly := newFakeEngine(t)
	chatOnly.chatOnly = true
	_, id := testModelDir(t)
	n := 0
	fronted := func(cfg *Config) {
		if n++; n == 2 {
			cfg.Provider.Models = []ModelConfig{{Name: DevnetModelName, Engine: EngineUpstream, ID: id, UpstreamURL: chatOnly.url,
				UpstreamModel: "fake", Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt}}}
		}
	}
	c := newChainNetWith(t, 2, 2, 0, testChainParams(60), chainExtra{provOpts: []func(*Config){fronted}},
		func(cfg *Config) { cfg.Router.ProbeInterval = time.Second })
	start := time.Now()
	for _, v := range c.validators {
		var es []pricefeed.Entry
		nodetest.Eventually(t, 120*time.Second, "an attested entry for the chat-only upstream provider", func() bool {
			es = (pricefeed.API{Feed: v.feed, Table: v.table}).Query(pricefeed.Params{Provider: c.registered[1].Host().ID().String()}).Entries
			return len(es) == 1 && es[0].Attested && es[0].SuccessRate == 1
		})
	}
	if chatOnly.plainHits() == 0 {
		t.Fatal("no probe reached the chat-only engine")
	}
	prov := c.registered[0].Host().ID().String()
	var e pricefeed.Entry
	for _, v := range c.validators {
		nodetest.Eventually(t, 120*time.Second, "an attested price-feed entry for the provider", func() bool {
			es := (pricefeed.API{Feed: v.feed, Table: v.table}).Query(pricefeed.Params{Provider: prov}).Entries
			if len(es) == 1 && es[0].Attested {
				e = es[0]
				return true
			}
			return false
		})
	}
	t.Logf("attested after %s: %+v", time.Since(start).Round(time.Millisecond), e)
	if len(e.Observers) != 2 || e.Count < 2 || e.SuccessRate <= 0 || e.PricePerUnitP50 <= 0 || e.LatencyP50Ms <= 0 {
		t.Fatalf("entry %+v", e)
	}
	if e.Claims == nil || !e.Claims.HardwareClass.Claimed || e.Claims.HardwareClass.Value == "" {
		t.Fatalf("claims %+v", e.Claims)
	}
	_, body := send(t, c.validators[0].APIURL()+"/metrics", "", "")
	if !strings.Contains(body, `tenzro_pricefeed_attested{model="`+e.Model+`",provider="`+prov+`"} 1`) {
		t.Fatalf("no attested gauge in /metrics")
	}
}
