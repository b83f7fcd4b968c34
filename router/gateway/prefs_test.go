package gateway

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/prefs"
)

// offerWith announces provider i's offer of the test model changed by f,
// with the no-retention claim noRet.
func (m *market) offerWith(i int, noRet bool, f func(*gossip.ModelOffer)) {
	fp := m.provs[i]
	o := gossip.ModelOffer{ModelID: modelID, Name: modelName, RateCard: terms.RateCard{InputTokens: 1, OutputTokens: uint64(10 + i)},
		Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt}}
	f(&o)
	mach := fp.ident.MachineID()
	s := gossip.Sender{Peer: fp.id, Machine: mach, Backend: "software", Received: time.Now()}
	m.table.ApplyAnnouncement(&gossip.VerifiedAnnouncement{Sender: s, Announcement: gossip.Announcement{MachineID: mach[:],
		Region: "DE", Models: []gossip.ModelOffer{o}, NoRetention: noRet}})
	m.beat()
}

// withPrefs is request() with the preferences parsed from OpenRouter's
// JSON, as a client sends them.
func withPrefs(t *testing.T, js string) *Request {
	t.Helper()
	p, err := prefs.Parse([]byte(js), false)
	if err != nil {
		t.Fatal(err)
	}
	req := request()
	req.Prefs = p
	return req
}

// never fails the test if any call since n went to one of ps.
func (m *market) never(t *testing.T, n int, ps ...peer.ID) {
	t.Helper()
	for _, c := range m.calls()[n:] {
		if slices.Contains(ps, c.peer) {
			t.Fatalf("a call went to excluded provider %s (calls %v)", c.peer, peersOf(m.calls()[n:]))
		}
	}
}

func failing(int, *infer.Request) script {
	return script{first: ms, fail: &infer.ErrorFrame{Status: http.StatusInternalServerError, Code: terms.CodeInternal}}
}

// TestPrefsOrder: order is tried in the buyer's order (a peer ID or a
// machine ID) before the strategy's ranking, then the rest.
func TestPrefsOrder(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 4, testConfig(), answer(ms, "p0"), answer(ms, "p1"), failing, failing)
		p := m.provs
		req := withPrefs(t, `{"order":["`+p[3].id.String()+`","`+p[2].ident.MachineID().String()+`"]}`)
		req.NoHedge = true
		res := mustRoute(t, m, req)
		if got := peersOf(m.calls()); res.Provider.PeerID != p[0].id.String() || !slices.Equal(got, []peer.ID{p[3].id, p[2].id, p[0].id}) {
			t.Fatalf("called %v, served by %s; want p3, p2, then the cheapest p0", got, res.Provider.PeerID)
		}
	})
}

// TestPrefsIgnoreAndOnlyUnderHedgeAndFailover: an ignored provider (or
// one outside only) never gets a hedge or a failover, though it is the
// next best by price.
func TestPrefsIgnoreAndOnlyUnderHedgeAndFailover(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		slow := answer(900*ms, "slow")
		m := newMarket(t, st, 3, testConfig(), slow, answer(ms, "p1"), answer(ms, "p2"))
		p := m.provs
		for _, js := range []string{`{"ignore":["` + p[1].id.String() + `"]}`, `{"only":["` + p[0].id.String() + `","` + p[2].id.String() + `"]}`} {
			n := len(m.calls())
			res := mustRoute(t, m, withPrefs(t, js))
			if !res.Hedged || res.Provider.PeerID != p[2].id.String() {
				t.Fatalf("%s: served by %s hedged=%v, want a hedge won by p2", js, res.Provider.PeerID, res.Hedged)
			}
			m.never(t, n, p[1].id)
		}
		p[0].script = failing
		for _, js := range []string{`{"ignore":["` + p[1].id.String() + `"]}`, `{"only":["` + p[0].id.String() + `","` + p[2].id.String() + `"]}`} {
			n := len(m.calls())
			req := withPrefs(t, js)
			req.NoHedge = true
			if res := mustRoute(t, m, req); res.Provider.PeerID != p[2].id.String() || res.Attempts < 2 {
				t.Fatalf("%s: failover served by %s after %d attempts, want p2", js, res.Provider.PeerID, res.Attempts)
			}
			m.never(t, n, p[1].id)
		}
	})
}

// TestPrefsAllowFallbacksFalse: without fallbacks the ordered provider's
// failure is the answer; no other provider is called.
func TestPrefsAllowFallbacksFalse(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 2, testConfig(), failing, answer(ms, "p1"))
		p := m.provs
		_, _, err := route(t, m, withPrefs(t, `{"order":["`+p[0].id.String()+`"],"allow_fallbacks":false}`))
		var ge *Error
		if !errors.As(err, &ge) || ge.Status != http.StatusInternalServerError {
			t.Fatalf("got %v, want p0's 500", err)
		}
		m.never(t, 0, p[1].id)
		// No order: only the first ranked provider may serve (its breaker
		// now open after the failures above: a 5xx either way).
		n := len(m.calls())
		if _, _, err := route(t, m, withPrefs(t, `{"allow_fallbacks":false}`)); !errors.As(err, &ge) || ge.Status < http.StatusInternalServerError {
			t.Fatalf("got %v, want a 5xx from p0 alone", err)
		}
		m.never(t, n, p[1].id)
	})
}

// TestPrefsFilters: require_parameters, data_collection, quantizations
// and each max_price dimension exclude exactly the provider they should,
// and a preference nobody meets is a 503 naming each one and why.
func TestPrefsFilters(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 2, testConfig(), answer(ms, "p0"), answer(ms, "p1"))
		p := m.provs
		m.offerWith(0, false, func(o *gossip.ModelOffer) {
			o.Params, o.Quant = []string{gossip.ParamLogprobs, gossip.ParamSeed}, "q8_0"
			o.RateCard = terms.RateCard{InputTokens: 3, OutputTokens: 1}
		})
		m.offerWith(1, true, func(o *gossip.ModelOffer) {
			o.Params, o.Quant = []string{gossip.ParamLogprobs, gossip.ParamSeed, gossip.ParamTopK}, "f16"
			o.RateCard = terms.RateCard{InputTokens: 1, OutputTokens: 3, Minimum: 50}
		})
		cases := []struct {
			js   string
			topK int
			want int
		}{
			{`{}`, 5, 0}, // the cheaper without preferences
			{`{"require_parameters":true}`, 5, 1},
			{`{"require_parameters":true}`, 0, 0}, // top_k unused: p0 qualifies
			{`{"data_collection":"deny"}`, 0, 1},
			{`{"zdr":true}`, 0, 1},
			{`{"quantizations":["fp16"]}`, 0, 1},
			{`{"quantizations":["int8"]}`, 0, 0},
			{`{"max_price":{"prompt":2000000}}`, 0, 1},
			{`{"max_price":{"completion":2000000}}`, 0, 0},
			{`{"max_price":{"request":10}}`, 0, 0},
		}
		for _, c := range cases {
			n := len(m.calls())
			req := withPrefs(t, c.js)
			req.Sampling.TopK, req.NoHedge = c.topK, true
			res := mustRoute(t, m, req)
			if res.Provider.PeerID != p[c.want].id.String() {
				t.Fatalf("%s top_k=%d: served by %s, want p%d", c.js, c.topK, res.Provider.PeerID, c.want)
			}
			m.never(t, n, p[1-c.want].id)
		}
		_, _, err := route(t, m, withPrefs(t, `{"quantizations":["bf16"],"max_price":{"completion":2000000}}`))
		var ge *Error
		if !errors.As(err, &ge) || ge.Status != http.StatusServiceUnavailable || len(ge.Excluded) != 2 {
			t.Fatalf("got %v, want a 503 excluding both", err)
		}
		for i, e := range ge.Excluded {
			if e.Provider != p[i].id.String() && e.Provider != p[1-i].id.String() || !strings.HasPrefix(e.Reason, "quantizations: ") {
				t.Fatalf("excluded %+v", ge.Excluded)
			}
		}
		if !strings.Contains(ge.Message, "quantizations removed 2") {
			t.Fatalf("message %q does not name the filter", ge.Message)
		}
		// max_price as a bare number (tenzro's, X-Tenzro-Max-Price) caps
		// the whole quote, as it always did.
		if _, _, err := route(t, m, withPrefs(t, `{"max_price":1}`)); !errors.As(err, &ge) || ge.Status != http.StatusServiceUnavailable {
			t.Fatalf("a total cap under every quote: %v, want a 503", err)
		}
	})
}

// TestPrefsSortThroughput: sort "throughput" ranks by the output tokens/s
// the router measured, whatever the price.
func TestPrefsSortThroughput(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		tokens := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		slowGen := func(int, *infer.Request) script { return script{first: ms, gap: 100 * ms, tokens: tokens} }
		fastGen := func(int, *infer.Request) script { return script{first: ms, gap: ms, tokens: tokens} }
		m := newMarket(t, st, 2, testConfig(), slowGen, fastGen)
		p := m.provs
		for _, i := range []int{0, 1} { // one measured call each
			req := withPrefs(t, `{"only":["`+p[i].id.String()+`"]}`)
			mustRoute(t, m, req)
		}
		if a, b := m.gw.throughput.get(p[0].id), m.gw.throughput.get(p[1].id); !a.known() || !b.known() || a.rate >= b.rate {
			t.Fatalf("measured %+v and %+v, want p1 faster", a, b)
		}
		req := withPrefs(t, `{"sort":"throughput"}`)
		req.NoHedge = true
		if res := mustRoute(t, m, req); res.Provider.PeerID != p[1].id.String() {
			t.Fatalf("sort throughput served by %s, want the faster p1", res.Provider.PeerID)
		}
		req = withPrefs(t, `{"sort":"price"}`)
		req.NoHedge, req.Strategy = true, "latency"
		if res := mustRoute(t, m, req); res.Provider.PeerID != p[0].id.String() {
			t.Fatalf("sort price served by %s, want the cheaper p0", res.Provider.PeerID)
		}
	})
}

// TestModelFallback: the first model's providers all failing, the next
// of models serves, and the result says which model; a model nobody
// announces falls through too.
func TestModelFallback(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 3, testConfig(), failing, failing, answer(ms, "other"))
		m.announce(m.provs[2], 12, otherID, "other")
		req := request()
		req.Models, req.NoHedge = []string{"other"}, true
		res := mustRoute(t, m, req)
		if res.Model != "other" || res.Provider.PeerID != m.provs[2].id.String() {
			t.Fatalf("served %q by %s, want other by p2", res.Model, res.Provider.PeerID)
		}
		req = request()
		req.Model, req.Models = "nobody-serves-this", []string{"other"}
		if res := mustRoute(t, m, req); res.Model != "other" {
			t.Fatalf("served %q, want other", res.Model)
		}
		req = request()
		req.Models = []string{"nobody-serves-this"}
		var ge *Error
		if _, _, err := route(t, m, req); !errors.As(err, &ge) || ge.Status != http.StatusNotFound {
			t.Fatalf("got %v, want the last model's 404", err)
		}
	})
}

// TestRegionPinSpelling: a pin is matched in any case, and a pin that is
// neither a country nor a continent is the buyer's 400, not a 503.
func TestRegionPinSpelling(t *testing.T) {
	for pin, region := range map[string]string{"europe": "DE", "EUROPE": "FR", "de": "DE", "North america": "US"} {
		if !inRegion(pin, region) {
			t.Errorf("pin %q does not admit %s", pin, region)
		}
		req := request()
		req.PinRegion = pin
		if err := Validate(req); err != nil {
			t.Errorf("pin %q: %v", pin, err)
		}
	}
	if err := validSession(&SessionRequest{Jurisdiction: "europe"}); err != nil {
		t.Errorf("a session's jurisdiction in lower case: %v", err)
	}
	if inRegion("asia", "DE") {
		t.Error("asia admits DE")
	}
	for _, pin := range []string{"Europa", "DE-BY", "Mars"} {
		req := request()
		req.PinRegion = pin
		var ge *Error
		if err := Validate(req); !errors.As(err, &ge) || ge.Status != http.StatusBadRequest || ge.Param != "tenzro.region" {
			t.Errorf("pin %q: %v, want a 400 on tenzro.region", pin, err)
		}
	}
}

// TestPrefsPreferredLatencyAndThroughput: providers the router measured
// slower than a preferred cutoff go after those that meet it (the
// cheaper one loses its place), and nobody is excluded for it.
func TestPrefsPreferredLatencyAndThroughput(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		tokens := []string{"a", "b", "c", "d"}
		slow := func(int, *infer.Request) script { return script{first: 300 * ms, gap: 100 * ms, tokens: tokens} }
		m := newMarket(t, st, 2, testConfig(), slow, answer(5*ms, tokens...))
		p := m.provs
		for range 3 {
			for _, i := range []int{0, 1} {
				mustRoute(t, m, withPrefs(t, `{"only":["`+p[i].id.String()+`"]}`))
			}
		}
		for _, js := range []string{`{"preferred_max_latency":0.1}`, `{"preferred_max_latency":{"p90":0.1}}`, `{"preferred_min_throughput":20}`} {
			n := len(m.calls())
			req := withPrefs(t, js)
			req.NoHedge = true
			if res := mustRoute(t, m, req); res.Provider.PeerID != p[1].id.String() {
				t.Fatalf("%s: served by %s, want the faster p1", js, res.Provider.PeerID)
			}
			m.never(t, n, p[0].id)
		}
		// Nobody meets it: still served, by the cheapest.
		req := withPrefs(t, `{"preferred_max_latency":0.001}`)
		req.NoHedge = true
		if res := mustRoute(t, m, req); res.Provider.PeerID != p[0].id.String() {
			t.Fatalf("an unmet preference served by %s, want the cheaper p0", res.Provider.PeerID)
		}
	})
}

// TestPrefsOperatorAccounts: an operator account in ignore, only or order
// stands for every machine the chain says it operates.
func TestPrefsOperatorAccounts(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 3, true, answer(ms, "p0"), answer(ms, "p1"), answer(ms, "p2"))
		p := sm.provs
		sm.chain.mu.Lock()
		sm.chain.operators[p[1].id] = "op-0" // op-0 runs p0 and p1
		sm.chain.mu.Unlock()
		for js, want := range map[string]int{`{"ignore":["op-0"]}`: 2, `{"only":["op-2","op-1"]}`: 2, `{"order":["op-2"]}`: 2, `{"only":["op-0"]}`: 0} {
			n := len(sm.calls())
			req := withPrefs(t, js)
			req.NoHedge = true
			if res := mustRoute(t, sm.market, req); res.Provider.PeerID != p[want].id.String() {
				t.Fatalf("%s: served by %s, want p%d", js, res.Provider.PeerID, want)
			}
			if js == `{"ignore":["op-0"]}` {
				sm.never(t, n, p[0].id, p[1].id)
			}
		}
	})
}
