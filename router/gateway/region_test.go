package gateway

import (
	"errors"
	"net/http"
	"testing"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// TestRegionPinAcceptsContinent: a request's region pin "Europe" routes to
// the providers announcing a country in Europe (DE, FR) and never to the
// cheaper one in the US, as a session's jurisdiction does; a country pin
// stays exact, and a continent with no provider is a 503 no_provider.
func TestRegionPinAcceptsContinent(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		failing := func(int, *infer.Request) script {
			return script{first: ms, fail: &infer.ErrorFrame{Status: 503, Code: "engine"}}
		}
		sm := newSessionMarket(t, st, 3, false, answer(ms, "us"), failing, answer(ms, "fr"))
		for i, region := range []string{"US", "DE", "FR"} {
			sm.standby(i, region, -1, uint64(10+i)) // the US provider is the cheapest
		}
		sm.beatOnly(0, 1, 2)
		pinned := func(region string) (*Result, error) {
			req := request()
			req.PinRegion, req.NoHedge = region, true
			res, _, err := route(t, sm.market, req)
			return res, err
		}
		n := len(sm.calls())
		res, err := pinned("Europe")
		if err != nil || res.Provider.PeerID != sm.provs[2].id.String() {
			t.Fatalf("Europe: %+v %v", res, err)
		}
		cs := sm.calls()[n:]
		if len(cs) != 2 || cs[0].peer != sm.provs[1].id || cs[1].peer != sm.provs[2].id {
			t.Fatalf("Europe called %v, want DE then FR and never US", peersOf(cs))
		}
		if res, err := pinned("US"); err != nil || res.Provider.PeerID != sm.provs[0].id.String() {
			t.Fatalf("US: %+v %v", res, err)
		}
		n = len(sm.calls())
		if res, err := pinned("FR"); err != nil || res.Provider.PeerID != sm.provs[2].id.String() || len(sm.calls()) != n+1 {
			t.Fatalf("FR: %+v %v", res, err)
		}
		var ge *Error
		if _, err := pinned("Asia"); !errors.As(err, &ge) || ge.Status != http.StatusServiceUnavailable || ge.Code != "no_provider" {
			t.Fatalf("Asia: %v", err)
		}
	})
}
