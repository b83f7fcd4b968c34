package pricefeed

import (
	"fmt"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
)

// BenchmarkAdd is one accepted observation into a feed already holding
// the current and the previous window of n providers (one model each), as
// a node's feed holds at that size.
func BenchmarkAdd(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f, clk := newFeedB(b)
			var by [32]byte
			by[0] = 1
			add := func(i int, at time.Time) {
				f.Add(Observation{Observer: by, Provider: fmt.Sprintf("p%05d", i%n), Machine: "m", Model: "aa",
					Price: 10, LatencyMs: 20, OutputTokens: 4, Success: true, Time: at})
			}
			for i := range n {
				add(i, clk.Now().Add(-f.Window()))
				add(i, clk.Now())
			}
			if got := len(f.buckets); got != 2*n {
				b.Fatalf("%d buckets, want %d", got, 2*n)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				add(i, clk.Now())
				i++
			}
		})
	}
}

func newFeedB(b *testing.B) (*Feed, *clock.Mock) {
	b.Helper()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 1, 12, 1, 0, 0, time.UTC))
	return New(10*time.Minute, clk, nil), clk
}
