package hedge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenzrod/tenzrod/router/strategy"
)

func simulate(t *testing.T, cfg SimConfig) (off, on SimStats) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var err error
		cfg.Hedge = false
		if off, err = Simulate(cfg); err != nil {
			t.Fatal(err)
		}
		cfg.Hedge = true
		if on, err = Simulate(cfg); err != nil {
			t.Fatal(err)
		}
	})
	return off, on
}

// TestSimulateHedgingCutsTail runs the default mix at 20k requests. The
// bounds are below what one run measures (see scripts/bench-tail for the
// 100k figures) but far above what a broken hedge would give.
func TestSimulateHedgingCutsTail(t *testing.T) {
	cfg := SimConfig{Mix: DefaultMix, Requests: 20_000, Seed: 7}
	off, on := simulate(t, cfg)
	t.Logf("off %+v", off)
	t.Logf("on  %+v", on)
	cut := float64(off.P999) / float64(on.P999)
	if cut < 5 || on.ExtraPct > 5.5 || on.ExtraPct < 3 || off.ExtraPct != 0 {
		t.Fatalf("p99.9 cut %.2fx at %.2f%% extra", cut, on.ExtraPct)
	}
	// The weighted ranking follows the latencies it observed, which the
	// hedge changes, so the body's median moves a little, no more.
	if d := float64(on.P50-off.P50) / float64(off.P50); d > 0.02 || d < -0.02 || on.Hedges != on.Attempts-on.Requests || on.HedgesWon == 0 || on.HedgesWon > on.Hedges {
		t.Fatalf("inconsistent stats: off %+v on %+v", off, on)
	}
	off2, on2 := simulate(t, cfg)
	if off2 != off || on2 != on {
		t.Fatalf("same seed, different result: %+v / %+v", on, on2)
	}
}

func TestSimulateConfigErrors(t *testing.T) {
	for _, c := range []SimConfig{
		{Mix: DefaultMix}, {Mix: DefaultMix, Requests: 1, Providers: 1},
		{Mix: Mix{Median: 0, SlowFactor: 1}, Requests: 1},
		{Mix: Mix{Median: ms, SlowFactor: 0.5}, Requests: 1},
		{Mix: Mix{Median: ms, SlowFactor: 2, SlowShare: 2}, Requests: 1},
	} {
		if _, err := Simulate(c); !errors.Is(err, ErrSim) {
			t.Errorf("%+v: %v, want ErrSim", c, err)
		}
	}
}

// TestBenchTail prints the bench-tail table. Under `go test` it runs a
// short 3000-request pass (virtual time, about a second) so the table's
// code stays exercised; scripts/bench-tail sets TENZRO_BENCH_TAIL_N (default
// 100000 there) for the figures.
func TestBenchTail(t *testing.T) {
	n := 3000
	if s := os.Getenv("TENZRO_BENCH_TAIL_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1000 {
			t.Fatalf("TENZRO_BENCH_TAIL_N=%q: want an integer >= 1000", s)
		}
		n = v
	}
	mixes := []Mix{
		DefaultMix,
		{Median: 20 * ms, Sigma: 0.5, SlowShare: 0.03, SlowFactor: 50},
		{Median: 20 * ms, Sigma: 0.5, SlowShare: 0.01, SlowFactor: 100},
	}
	var out strings.Builder
	for _, m := range mixes {
		cfg := SimConfig{Mix: m, Requests: n, Seed: 1}
		start := time.Now() // wall time of the run, outside the bubble
		off, on := simulate(t, cfg)
		cut := float64(off.P999) / float64(on.P999)
		verdict := "MEETS"
		if cut < 10 || on.ExtraPct > 5.5 {
			verdict = "MISSES"
		}
		fmt.Fprintf(&out, "\nmix: %.0f%% lognormal(median %v, sigma %.2f) + %.0f%% stragglers x%g; 5 providers; %d requests; seed 1; virtual time (%v wall)\n",
			100*(1-m.SlowShare), m.Median, m.Sigma, 100*m.SlowShare, m.SlowFactor, n, time.Since(start).Round(time.Millisecond))
		fmt.Fprintf(&out, "%-8s %10s %10s %10s %10s %8s %12s\n", "hedging", "p50", "p95", "p99", "p99.9", "extra", "hedges won")
		for _, r := range []struct {
			name string
			s    SimStats
		}{{"off", off}, {"on", on}} {
			won := "-"
			if r.s.Hedges > 0 {
				won = fmt.Sprintf("%d/%d", r.s.HedgesWon, r.s.Hedges)
			}
			fmt.Fprintf(&out, "%-8s %10s %10s %10s %10s %7.2f%% %12s\n", r.name, ms1(r.s.P50), ms1(r.s.P95),
				ms1(r.s.P99), ms1(r.s.P999), r.s.ExtraPct, won)
		}
		fmt.Fprintf(&out, "p99.9 cut %.2fx for %.2f%% extra requests; target >= 10x for <= 5.5%%: %s\n", cut, on.ExtraPct, verdict)
	}
	fmt.Print(out.String())
}

func ms1(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(ms)) }

// BenchmarkRunOverhead measures Run's own cost per request (goroutine,
// channel, contexts, timer) with an attempt that answers at once.
func BenchmarkRunOverhead(b *testing.B) {
	cs := cands(100*ms, "a", "b", "c")
	attempt := func(context.Context, strategy.Candidate) (int, error) { return 1, nil }
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := Run(context.Background(), cs, attempt, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
