package gateway

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/breaker"
)

// TestBreakerVisible: a provider that keeps failing opens its breaker, and
// the router metrics show it open, until when, how often it opened and
// the failure that opened it; the gauge follows the state.
func TestBreakerVisible(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		broken := func(int, *infer.Request) script { return script{first: ms, fail: errors.New("engine on fire")} }
		m := newMarket(t, st, 2, testConfig(), broken, answer(ms, "ok"))
		for range breaker.DefaultFailures {
			req := request()
			req.PinProvider = m.provs[0].id.String()
			if _, _, err := route(t, m, req); err == nil {
				t.Fatal("a call pinned to the failing provider succeeded")
			}
		}
		snap := m.gw.Snapshot()
		c := snap.Providers[m.provs[0].id.String()]
		if c == nil || c.Breaker == nil {
			t.Fatalf("no breaker in the router metrics: %+v", snap.Providers)
		}
		b := c.Breaker
		if b.State != "open" || b.Opens != 1 || b.OpenUntil.IsZero() || !strings.Contains(b.LastFailure, "engine on fire") {
			t.Fatalf("breaker %+v, want open once, with an end and the failure that opened it", b)
		}
		if got := gaugeValue(t, m.gw.watch.state.WithLabelValues(m.provs[0].id.String())); got != float64(breaker.Open) {
			t.Fatalf("breaker_state gauge %v, want %d (open)", got, breaker.Open)
		}
		if _, _, err := route(t, m, request()); err != nil {
			t.Fatalf("the healthy provider should serve: %v", err)
		}
		if ok := m.gw.Snapshot().Providers[m.provs[1].id.String()]; ok == nil || ok.Breaker == nil || ok.Breaker.State != "closed" || ok.Breaker.LastFailure != "" {
			t.Fatalf("healthy provider's breaker %+v", ok)
		}
	})
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil || m.Gauge == nil {
		t.Fatalf("read gauge: %v", err)
	}
	return m.Gauge.GetValue()
}

// TestWarmingUp: a gateway that has heard no provider yet answers 503
// warming_up with a retry hint for a while after it starts, then 404.
func TestWarmingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gw, err := New(testConfig(), Deps{Transport: &transport{provs: map[peer.ID]*fakeProvider{}, n: map[peer.ID]int{}}, Table: router.NewTable(nil, nil)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = gw.Route(t.Context(), request(), func(Delta) error { return nil })
		var ge *Error
		if !errors.As(err, &ge) || ge.Status != http.StatusServiceUnavailable || ge.Code != "warming_up" || ge.RetryAfter == 0 {
			t.Fatalf("just started: %v, want 503 warming_up with a retry hint", err)
		}
		time.Sleep(warmUp)
		_, err = gw.Route(t.Context(), request(), func(Delta) error { return nil })
		if !errors.As(err, &ge) || ge.Status != http.StatusNotFound || ge.Code != "model_not_found" {
			t.Fatalf("after the warm-up: %v, want 404 model_not_found", err)
		}
	})
}

// TestUnpaidFailsOver: a provider's 402 (its settler owes it a record, or
// the escrow is short by its count) sends the call to another provider and
// never counts against the refusing one.
func TestUnpaidFailsOver(t *testing.T) {
	for _, code := range []string{terms.CodeUnpaid, terms.CodePaymentRequired} {
		inBubble(t, func(t *testing.T, st *bubbleLedger) {
			refuse := func(int, *infer.Request) script {
				return script{first: ms, fail: &infer.ErrorFrame{Status: http.StatusPaymentRequired, Code: code, Message: "owes a record"}}
			}
			m := newMarket(t, st, 2, testConfig(), refuse, answer(ms, "ok"))
			for range 3 {
				req := request()
				req.Strategy = "price" // the refusing provider is the cheaper one: always tried first
				res, _, err := route(t, m, req)
				if err != nil || res.Provider.PeerID != m.provs[1].id.String() {
					t.Fatalf("%s: %v %+v, want served by the other provider", code, err, res)
				}
			}
			if s := m.gw.breakers.Get(m.provs[0].id).Snapshot(); s.ConsecutiveFailures != 0 || s.State != breaker.Closed {
				t.Fatalf("%s: the refusing provider's breaker %+v", code, s)
			}
		})
	}
}
