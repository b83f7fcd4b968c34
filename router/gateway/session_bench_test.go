package gateway

import (
	"context"
	"testing"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// BenchmarkRouteSession is the gateway's cost of a session turn against a
// plain request over an instant scripted provider: plain (no session),
// pinned (a session without continuity) and standby (continuity on with a
// successor kept, challenged every turn over the in-memory stand-in).
// Run with:
//
//	go test -run '^$' -bench RouteSession -benchmem ./router/gateway/
func BenchmarkRouteSession(b *testing.B) {
	instant := func(int, *infer.Request) script { return script{tokens: []string{"Hello", " there"}} }
	for _, mode := range []string{"plain", "pinned", "standby"} {
		b.Run(mode, func(b *testing.B) {
			st := openStore(b)
			if err := st.st.Credit("alice", 1<<50); err != nil {
				b.Fatal(err)
			}
			sm := newSessionMarket(b, st, 3, true, instant)
			cfg := testConfig()
			cfg.BuyerDefaults.RatePerMinute = 6_000_000
			gw, err := New(cfg, Deps{Transport: sm.tr, Table: sm.table, Ledger: st, Successors: sm.net, Operators: sm.chain, Streams: sm.chain})
			if err != nil {
				b.Fatal(err)
			}
			sm.gw = gw
			for i := range 3 {
				sm.standby(i, "DE", int64(i+1), uint64(10+i))
			}
			var sess *SessionRequest
			switch mode {
			case "pinned":
				sess = &SessionRequest{ID: "bench-pinned"}
			case "standby":
				sess = &SessionRequest{ID: "bench-standby", Continuity: ContinuityOn}
			}
			ctx, discard := context.Background(), func(Delta) error { return nil }
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%1000 == 0 { // providers fall down 6 s after their last heartbeat
					sm.beatOnly(0, 1, 2)
				}
				req := request()
				if sess != nil {
					cp := *sess
					req.Session = &cp
				}
				if _, err := gw.Route(ctx, req, discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
