package node

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// faultMarket is a gateway with a funded buyer, one healthy provider on the
// embedded engine, and providers fronting fake engines. The fronted ones
// are cheaper, in order, so the price strategy tries fakes[0] first, then
// fakes[1], …, and the healthy provider last.
type faultMarket struct {
	gw      *Node
	healthy peer.ID
	fronts  []peer.ID
	fakes   []*fakeEngine
}

// The timeouts the fault tests route with: short enough to keep the tests
// fast, long enough for the embedded engine on a busy CPU.
const (
	testFirstToken = 400 * time.Millisecond * raceScale
	testStall      = 400 * time.Millisecond * raceScale
)

func faultRouter(r *RouterConfig) {
	r.Deadline, r.FirstTokenTimeout, r.StallTimeout = 10*testStall, testFirstToken, testStall
}

func newFaultMarket(t *testing.T, fronted int, tune func(*RouterConfig)) *faultMarket {
	t.Helper()
	return newFaultMarketWith(t, fronted, tune, nil)
}

// newFaultMarketWith is newFaultMarket with each fronted provider's model
// entry adjusted by tuneModel.
func newFaultMarketWith(t *testing.T, fronted int, tune func(*RouterConfig), tuneModel func(*ModelConfig)) *faultMarket {
	t.Helper()
	return newFaultMarketEngines(t, fronted, tune, tuneModel, nil)
}

// newFaultMarketEngines is newFaultMarketWith with the i-th fake engine
// set up by tuneEngine before its provider starts.
func newFaultMarketEngines(t *testing.T, fronted int, tune func(*RouterConfig), tuneModel func(*ModelConfig), tuneEngine func(int, *fakeEngine)) *faultMarket {
	t.Helper()
	cfg := testConfig(t, RoleGateway, "software", nil)
	cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
	faultRouter(&cfg.Router)
	if tune != nil {
		tune(&cfg.Router)
	}
	gw := startNode(t, cfg)
	boot := gw.Host().Addrs()[:1]
	m := &faultMarket{gw: gw, healthy: startNode(t, testConfig(t, RoleProvider, "software", boot)).Host().ID()}
	_, id := testModelDir(t)
	for i := range fronted {
		fe := newFakeEngine(t)
		if tuneEngine != nil {
			tuneEngine(i, fe)
		}
		pc := testConfig(t, RoleProvider, "software", boot)
		pc.Provider.Models = []ModelConfig{{Name: DevnetModelName, Engine: EngineUpstream, ID: id, UpstreamURL: fe.url,
			UpstreamModel: "fake", Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt},
			RateCard: terms.RateCard{InputTokens: uint64(i), OutputTokens: 1, Minimum: 1}}}
		if tuneModel != nil {
			tuneModel(&pc.Provider.Models[0])
		}
		m.fakes = append(m.fakes, fe)
		m.fronts = append(m.fronts, startNode(t, pc).Host().ID())
	}
	nodetest.Eventually(t, 30*time.Second, "every provider warm at the gateway", func() bool { return warmOffers(gw, DevnetModelName) == fronted+1 })
	return m
}

// answer is what the buyer got.
type answer struct {
	status int
	header http.Header
	text   string         // the answer's text (all content deltas when streamed)
	done   bool           // the stream ended with [DONE]
	err    map[string]any // the error object (the body's, or the stream's error event)
	tenzro openai.TenzroInfo
	raw    string
}

// ask sends one chat completion with the given tenzro options as the buyer.
// Requests route by price (the fronted fakes first) without hedging unless
// opts says otherwise; an option set to nil is left out.
func (m *faultMarket) ask(t *testing.T, stream bool, opts map[string]any) answer {
	t.Helper()
	return m.askWith(t, stream, opts, nil)
}

// askWith is ask with more fields in the request body.
func (m *faultMarket) askWith(t *testing.T, stream bool, opts, fields map[string]any) answer {
	t.Helper()
	o := map[string]any{"strategy": "price", "hedge": false}
	for k, v := range opts {
		o[k] = v
		if v == nil {
			delete(o, k)
		}
	}
	fs := map[string]any{"model": DevnetModelName, "stream": stream, "max_tokens": 16, "seed": 5,
		"messages": []map[string]string{{"role": "user", "content": "Tell me about the sea"}}, "tenzro": o}
	for k, v := range fields {
		fs[k] = v
	}
	body, _ := json.Marshal(fs)
	req, _ := http.NewRequest(http.MethodPost, m.gw.APIURL()+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	if !stream || resp.Header.Get("Content-Type") != "text/event-stream" {
		raw, _ := io.ReadAll(resp.Body)
		a.raw = string(raw)
		var full struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
			Error  map[string]any    `json:"error"`
			Tenzro openai.TenzroInfo `json:"tenzro"`
		}
		if err := json.Unmarshal(raw, &full); err != nil {
			t.Fatalf("status %d, body %q: %v", resp.StatusCode, clip(string(raw)), err)
		}
		a.err, a.tenzro = full.Error, full.Tenzro
		if len(full.Choices) > 0 {
			a.text = full.Choices[0].Message.Content
		}
		return a
	}
	var text, raw strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		raw.WriteString(line + "\n")
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if a.done {
			t.Fatalf("event after [DONE]: %s", clip(raw.String()))
		}
		if data == "[DONE]" {
			a.done = true
			continue
		}
		var ev struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
			Error  map[string]any     `json:"error"`
			Tenzro *openai.TenzroInfo `json:"tenzro"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("bad event %q: %v", data, err)
		}
		for _, c := range ev.Choices {
			text.WriteString(c.Delta.Content)
		}
		if ev.Error != nil {
			a.err = ev.Error
		}
		if ev.Tenzro != nil {
			a.tenzro = *ev.Tenzro
		}
	}
	a.text, a.raw = text.String(), raw.String()
	return a
}

// servedBy checks a successful answer came from p with a verified receipt
// and a payment record.
func (a answer) servedBy(t *testing.T, p peer.ID) {
	t.Helper()
	if a.status != http.StatusOK || a.err != nil {
		t.Fatalf("status %d, error %v: %s", a.status, a.err, clip(a.raw))
	}
	if a.tenzro.Provider.PeerID != p.String() {
		t.Fatalf("served by %s, want %s: %s", a.tenzro.Provider.PeerID, p, clip(a.raw))
	}
	if a.tenzro.Receipt == nil || !a.tenzro.Receipt.Verified || a.tenzro.Payment == nil {
		t.Fatalf("no verified receipt and payment: %s", clip(a.raw))
	}
}

// truncated checks a streamed answer ended with an explicit error event
// carrying code, and without [DONE].
func (a answer) truncated(t *testing.T, code string) {
	t.Helper()
	if a.status != http.StatusOK || a.done || a.err == nil || a.err["code"] != code {
		t.Fatalf("want an error event %q and no [DONE]; status %d, done %v, error %v:\n%s", code, a.status, a.done, a.err, clip(a.raw))
	}
}

// bill is what the buyer paid, per provider, since the last look.
type bill struct {
	balance uint64
	paid    map[peer.ID]uint64
	count   int
}

func (m *faultMarket) ledger(t *testing.T) bill {
	t.Helper()
	bal, err := m.gw.store.Balance("alice")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := m.gw.store.ListPayments("alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	b := bill{balance: bal, paid: map[peer.ID]uint64{}, count: len(recs)}
	for _, r := range recs {
		b.paid[peer.ID(r.ProviderPeer)] += r.Price
	}
	return b
}

// billed checks that, since before, the buyer paid exactly n payments, all
// to p (none when n is 0), and that the balance fell by what was paid.
func (m *faultMarket) billed(t *testing.T, before bill, p peer.ID, n int) {
	t.Helper()
	after := m.ledger(t)
	if after.count-before.count != n {
		t.Fatalf("%d new payments, want %d", after.count-before.count, n)
	}
	var total uint64
	for q, v := range after.paid {
		d := v - before.paid[q]
		total += d
		if d != 0 && q != p {
			t.Fatalf("paid %d to %s, which should get nothing", d, q)
		}
	}
	if n > 0 && total == 0 || before.balance-after.balance != total {
		t.Fatalf("balance %d → %d, payments total %d", before.balance, after.balance, total)
	}
}

// counts returns p's routing counters at the gateway.
func (m *faultMarket) counts(p peer.ID) gateway.ProviderCounts {
	if c := m.gw.gateway.Metrics().Snapshot().Providers[p.String()]; c != nil {
		return *c
	}
	return gateway.ProviderCounts{}
}

// heal makes every fake answer well again and waits until the gateway
// routes to the first one again (its backoff or breaker let it back in).
func (m *faultMarket) heal(t *testing.T) {
	t.Helper()
	for _, fe := range m.fakes {
		fe.always(fault{})
	}
	nodetest.Eventually(t, 15*time.Second, "the fronted provider serving again", func() bool {
		return m.ask(t, false, nil).tenzro.Provider.PeerID == m.fronts[0].String()
	})
}

// throttled sends requests for at least d, and until fake i has seen two
// since it had seen from, while it keeps refusing with back-off signals;
// each must be served by the healthy provider. It returns how many it sent
// and the gaps between the requests fake i saw.
func (m *faultMarket) throttled(t *testing.T, i int, from int64, d time.Duration) (int, []time.Duration) {
	t.Helper()
	n := 0
	for start := time.Now(); time.Since(start) < d || m.fakes[i].hits.Load() < from+2; n++ {
		if time.Since(start) > 15*time.Second {
			t.Fatalf("the provider was not tried again in %s", time.Since(start))
		}
		m.ask(t, n%2 == 1, nil).servedBy(t, m.healthy)
		time.Sleep(20 * time.Millisecond)
	}
	return n, m.fakes[i].gaps(from)
}

// run runs a subtest from a healed market, whatever the one before left.
func (m *faultMarket) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		m.heal(t)
		f(t)
	})
}

// clip shortens a body for a failure message.
func clip(s string) string {
	if len(s) > 800 {
		return s[:800] + "…"
	}
	return s
}
