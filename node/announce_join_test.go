package node

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router"
)

// TestNewcomerGetsOffersAtOnce: a gateway that joins after a provider's
// announcement gets the provider's offers within seconds, not at the next
// periodic announcement (10 minutes here): the provider announces when a
// peer joins the announce topic.
func TestNewcomerGetsOffersAtOnce(t *testing.T) {
	pc := testConfig(t, RoleProvider, "software", nil)
	pc.Provider.AnnounceInterval = 10 * time.Minute
	p := waitWarm(t, startNode(t, pc))
	time.Sleep(time.Second) // the start-up announcement has gone out to nobody
	gc := testConfig(t, RoleGateway, "software", []string{p.Host().Addrs()[0]})
	gw := startNode(t, gc)
	nodetest.Eventually(t, 15*time.Second, "the provider's offer at the newcomer", func() bool {
		os := gw.Table().Offers(DevnetModelName)
		return len(os) == 1 && os[0].Status == router.StatusUp && os[0].State == gossip.StateWarm
	})
}
