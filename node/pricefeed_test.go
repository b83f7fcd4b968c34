package node

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router/pricefeed"
)

// TestPriceFeedAttestedOnChain: two validator nodes on a real chain probe
// the registered provider every second; each signs and gossips what it
// measured, both admit the other's observations against consensus state,
// and the provider's entry becomes attested by two validators, with the
// provider's claims beside it and the gauges on /metrics.
func TestPriceFeedAttestedOnChain(t *testing.T) {
	c := newChainNet(t, 2, 1, 0, testChainParams(60), func(cfg *Config) { cfg.Router.ProbeInterval = time.Second })
	start := time.Now()
	prov := c.registered[0].Host().ID().String()
	var e pricefeed.Entry
	for _, v := range c.validators {
		nodetest.Eventually(t, 120*time.Second, "an attested price-feed entry for the provider", func() bool {
			es := (feedAPI{feed: v.feed, table: v.table}).priceFeed(PriceFeedParams{Provider: prov}).Entries
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
	resp, err := http.Get(c.validators[0].APIURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `tenzro_pricefeed_attested{model="`+e.Model+`",provider="`+prov+`"} 1`) {
		t.Fatalf("no attested gauge in /metrics")
	}
}
