package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestRecentRequestsRecordEachRoute: a served, a hedged and a failed
// request each land in the ring, newest first, with who served, how many
// attempts, the billed price, the receipt's verdict and the error.
func TestRecentRequestsRecordEachRoute(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		down := func(int, *infer.Request) script {
			return script{first: ms, fail: &infer.ErrorFrame{Status: http.StatusInternalServerError, Code: terms.CodeInternal}}
		}
		m := newMarket(t, st, 2, testConfig(), down, answer(ms, "ok"))
		res := mustRoute(t, m, request())
		got := m.gw.Recent(0, 0)
		if len(got) != 1 {
			t.Fatalf("recent %+v, want one", got)
		}
		r := got[0]
		if r.Seq != 1 || r.Provider != m.provs[1].id.String() || r.Attempts != 2 || !r.ReceiptVerified ||
			r.Price == 0 || r.Price != res.Payment.Price || r.Nonce == "" || r.RequestDigest == "" || r.Error != "" {
			t.Fatalf("recent entry %+v for result %+v", r, res)
		}
		m2 := newMarket(t, st, 1, testConfig(), down)
		if _, _, err := route(t, m2, request()); err == nil {
			t.Fatal("a request to a failing provider succeeded")
		}
		bad := m2.gw.Recent(0, 0)
		if len(bad) != 1 || bad[0].Error == "" || bad[0].ReceiptVerified || bad[0].Price != 0 {
			t.Fatalf("failed request recorded as %+v", bad)
		}
	})
}

// TestRecentRingKeepsTheLast: past RecentKept the oldest go; after and
// limit select, newest first.
func TestRecentRingKeepsTheLast(t *testing.T) {
	r := newRecentRing()
	for i := range RecentKept + 50 {
		r.add(RecentRequest{Model: strings.Repeat("m", i%3+1)})
	}
	all := r.since(0, RecentKept)
	if len(all) != RecentKept || all[0].Seq != RecentKept+50 || all[len(all)-1].Seq != 51 {
		t.Fatalf("kept %d, seq %d..%d", len(all), all[0].Seq, all[len(all)-1].Seq)
	}
	if got := r.since(RecentKept+45, 100); len(got) != 5 || got[4].Seq != RecentKept+46 {
		t.Fatalf("since: %d entries", len(got))
	}
	if got := r.since(0, 3); len(got) != 3 || got[0].Seq != RecentKept+50 {
		t.Fatalf("limit: %+v", got)
	}
	if clip(strings.Repeat("é", 300)) != strings.Repeat("é", maxRecentError/2) {
		t.Fatal("clip cut a rune or kept too much")
	}
}

// TestLatenciesFollowTheTracker: the samples kept are those the P² tracker
// was fed, oldest first and bounded, with its p95 and the hedge delay the
// router would use.
func TestLatenciesFollowTheTracker(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 1, testConfig(), answer(20*ms, "x"))
		for range 5 {
			req := request()
			req.NoHedge = true
			mustRoute(t, m, req)
		}
		vs := m.gw.Latencies("")
		if len(vs) != 1 || vs[0].Provider != m.provs[0].id.String() || len(vs[0].SamplesMs) != 5 || vs[0].Count != 5 {
			t.Fatalf("latencies %+v", vs)
		}
		v := vs[0]
		if v.SamplesMs[0] != 20 || v.P95Ms != 20 || v.HedgeDelayMs != 40 { // clamped to hedge.MinDelay
			t.Fatalf("view %+v", v)
		}
		for range LatencyKept + 3 {
			m.gw.observeLatency(m.provs[0].id, 7*ms)
		}
		if s := m.gw.Latencies(m.provs[0].id)[0].SamplesMs; len(s) != LatencyKept || s[0] != 7 {
			t.Fatalf("ring kept %d, first %v", len(s), s[0])
		}
	})
}

// BenchmarkRecentRing: what remembering a request costs the routing path,
// and what a page's poll of the whole ring costs.
func BenchmarkRecentRing(b *testing.B) {
	r := newRecentRing()
	e := RecentRequest{Model: "m", Provider: "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA", Nonce: strings.Repeat("ab", 16)}
	b.Run("add", func(b *testing.B) {
		for b.Loop() {
			r.add(e)
		}
	})
	b.Run("since-all", func(b *testing.B) {
		for b.Loop() {
			_ = r.since(0, RecentKept)
		}
	})
}
