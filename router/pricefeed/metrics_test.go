package pricefeed

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetricsLintCleanInBaseUnits: the feed's families pass promlint's
// rules (no quantile label off a summary, seconds not ms), latency is in
// seconds, and an entry with no successful call exports no price and no
// latency, only its success ratio of 0.
func TestMetricsLintCleanInBaseUnits(t *testing.T) {
	f, clk := newFeed(t)
	f.Add(obs(valA, 80, 4, 250, true, clk.Now()))
	f.Add(obs(valB, 80, 4, 250, true, clk.Now()))
	problems, err := testutil.CollectAndLint(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	want := `
# HELP tenzro_pricefeed_latency_p50_seconds Median latency of the window's successful calls, on the observers' clocks.
# TYPE tenzro_pricefeed_latency_p50_seconds gauge
tenzro_pricefeed_latency_p50_seconds{model="` + model + `",provider="` + provider + `"} 0.25
`
	if err := testutil.CollectAndCompare(f, strings.NewReader(want), "tenzro_pricefeed_latency_p50_seconds"); err != nil {
		t.Fatal(err)
	}

	failing, fclk := newFeed(t)
	failing.Add(obs(valA, 0, 0, 0, false, fclk.Now()))
	if n := testutil.CollectAndCount(failing, "tenzro_pricefeed_price_p50_micro_units", "tenzro_pricefeed_price_p95_micro_units",
		"tenzro_pricefeed_latency_p50_seconds", "tenzro_pricefeed_latency_p95_seconds"); n != 0 {
		t.Fatalf("an entry without a successful call exports %d price or latency series", n)
	}
	if n := testutil.CollectAndCount(failing, "tenzro_pricefeed_success_ratio"); n != 1 {
		t.Fatalf("success ratio series: %d", n)
	}
}
