package pricefeed

import (
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

var (
	model    = strings.Repeat("ab", 32)
	provider = "12D3KooWProviderA"
	valA     = [32]byte{1}
	valB     = [32]byte{2}
)

func newFeed(t *testing.T) (*Feed, *clock.Mock) {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 1, 12, 1, 0, 0, time.UTC))
	return New(10*time.Minute, clk, nil), clk
}

func obs(by [32]byte, price, out uint64, lat uint32, ok bool, at time.Time) Observation {
	return Observation{Observer: by, Provider: provider, Machine: "m", Model: model, Price: price,
		LatencyMs: lat, InputTokens: 4, OutputTokens: out, Success: ok, Time: at}
}

func only(t *testing.T, f *Feed) Entry {
	t.Helper()
	es := f.Query(Filter{})
	if len(es) != 1 {
		t.Fatalf("%d entries, want 1", len(es))
	}
	return es[0]
}

func TestOneValidatorNeverAttests(t *testing.T) {
	f, clk := newFeed(t)
	for i := range 100 {
		f.Add(obs(valA, 80, 4, uint32(10+i), true, clk.Now()))
	}
	if e := only(t, f); e.Attested || len(e.Observers) != 1 || e.Count != 100 {
		t.Fatalf("one validator: %+v", e)
	}
}

func TestTwoValidatorsAttest(t *testing.T) {
	f, clk := newFeed(t)
	f.Add(obs(valA, 80, 4, 10, true, clk.Now()))
	f.Add(obs(valB, 160, 4, 30, true, clk.Now()))
	f.Add(obs(valB, 0, 0, 5000, false, clk.Now()))
	e := only(t, f)
	if !e.Attested || len(e.Observers) != 2 || e.Count != 3 {
		t.Fatalf("two validators: %+v", e)
	}
	// 80/8 and 160/8 micro-units per token; the failure has no price.
	if e.PricePerUnitP50 != 10 || e.PricePerUnitP95 != 20 || e.LatencyP50Ms != 10 || e.LatencyP95Ms != 30 {
		t.Fatalf("quantiles: %+v", e)
	}
	if e.SuccessRate < 0.66 || e.SuccessRate > 0.67 {
		t.Fatalf("success rate %v", e.SuccessRate)
	}
	// Other windows do not combine: B alone next window, A alone the one after.
	clk.Add(10 * time.Minute)
	f.Add(obs(valB, 80, 4, 10, true, clk.Now()))
	if e := only(t, f); !e.Attested || e.WindowStart != time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixMilli() {
		t.Fatalf("attested window kept while the next fills: %+v", e)
	}
	clk.Add(10 * time.Minute)
	f.Add(obs(valA, 80, 4, 10, true, clk.Now()))
	if e := only(t, f); e.Attested {
		t.Fatalf("one validator per window attested: %+v", e)
	}
}

// An announced rate card and claims never enter the observed columns: the
// price per unit is what validators were charged, and the provider's
// hardware class and region appear only as labelled claims.
func TestAnnouncedPricesNotObserved(t *testing.T) {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 1, 12, 1, 0, 0, time.UTC))
	tbl := router.NewTable(clk, slog.Default())
	pid, err := peer.Decode("12D3KooWGzBqjsTpTdc1MvBeVKJxJdLmUHMPv1N7mc3wdWkJeaFV")
	if err != nil {
		t.Fatal(err)
	}
	mid, _ := hex.DecodeString(model)
	tbl.ApplyAnnouncement(&gossip.VerifiedAnnouncement{
		Sender: gossip.Sender{Peer: pid, Machine: identity.MachineID{9}},
		Announcement: gossip.Announcement{MachineID: make([]byte, 32), TimeMs: clk.Now().UnixMilli(), Region: "DE", HardwareClass: "h100-claimed",
			Models: []gossip.ModelOffer{{ModelID: mid, Name: "tiny", WeightsHash: mid, Engine: "e",
				RateCard: terms.RateCard{InputTokens: 1, OutputTokens: 1, Minimum: 1}, Verification: []terms.Verification{"none"}}}},
	})
	f := New(0, clk, TableClaims(tbl))
	for _, by := range [][32]byte{valA, valB} {
		o := obs(by, 700, 3, 42, true, clk.Now())
		o.Provider = pid.String()
		f.Add(o)
	}
	e := only(t, f)
	if e.PricePerUnitP50 != 100 || e.PricePerUnitP95 != 100 || e.LatencyP50Ms != 42 {
		t.Fatalf("observed columns are not the observations: %+v", e)
	}
	if e.Claims == nil || e.Claims.HardwareClass != (Claim{"h100-claimed", true}) || e.Claims.Region != (Claim{"DE", true}) {
		t.Fatalf("claims: %+v", e.Claims)
	}
	b, _ := json.Marshal(e)
	var top map[string]any
	_ = json.Unmarshal(b, &top)
	for k, v := range top {
		if k != "provider_claims" && (strings.Contains(toJSON(v), "h100") || strings.Contains(toJSON(v), `"DE"`)) {
			t.Fatalf("claim leaked into observed column %s: %s", k, b)
		}
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestMetricsExport(t *testing.T) {
	f, clk := newFeed(t)
	f.Add(obs(valA, 80, 4, 10, true, clk.Now()))
	f.Add(obs(valB, 80, 4, 10, true, clk.Now()))
	reg := prometheus.NewRegistry()
	reg.MustRegister(f)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "tenzro_pricefeed_attested" {
			if ms := mf.GetMetric(); len(ms) != 1 || ms[0].GetGauge().GetValue() != 1 {
				t.Fatalf("attested gauge %v", ms)
			}
			return
		}
	}
	t.Fatal("no tenzro_pricefeed_attested")
}

// TestOldWindowsArePrunedOnceTheyAge: buckets of windows before the kept
// two go when the clock moves past them (pruning runs when the kept
// windows move, not on every observation).
func TestOldWindowsArePrunedOnceTheyAge(t *testing.T) {
	f, clk := newFeed(t)
	var a, b [32]byte
	a[0], b[0] = 1, 2
	f.Add(obs(a, 10, 5, 100, true, clk.Now()))
	f.Add(obs(b, 10, 5, 100, true, clk.Now()))
	clk.Add(10 * time.Minute)
	f.Add(obs(a, 20, 5, 100, true, clk.Now()))
	if n := len(f.buckets); n != 2 {
		t.Fatalf("%d buckets after one window, want the two kept", n)
	}
	clk.Add(20 * time.Minute)
	f.Add(obs(a, 30, 5, 100, true, clk.Now()))
	if n := len(f.buckets); n != 1 {
		t.Fatalf("%d buckets two windows later, want only the new one", n)
	}
}
