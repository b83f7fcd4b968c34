package gateway

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/router"
)

// The gateway over real libp2p hosts on loopback: each scripted provider
// of a standby market gets a host under its own peer key serving
// /tenzro/infer, so a provider killed is a host closed.

const loopNetwork = "loopback"

// hostCall is one call the gateway's real transport made and how it ended.
type hostCall struct {
	peer peer.ID
	err  error
}

// recordingTransport passes calls to the host transport and keeps their
// outcomes.
type recordingTransport struct {
	Transport
	mu    sync.Mutex
	calls []hostCall
}

func (r *recordingTransport) Call(ctx context.Context, p peer.ID, req *infer.Request, cfg infer.ClientConfig, onToken func(*infer.TokenFrame) error) (*infer.FinalFrame, infer.WireStats, error) {
	f, st, err := r.Transport.Call(ctx, p, req, cfg, onToken)
	r.mu.Lock()
	r.calls = append(r.calls, hostCall{p, err})
	r.mu.Unlock()
	return f, st, err
}

func (r *recordingTransport) since(n int) []hostCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hostCall(nil), r.calls[n:]...)
}

// onHosts gives every provider of sm a host answering "ok" (and sealing
// its turn to the successor named) and puts sm's gateway on a host of its
// own connected to them all. watch: the table suspects providers whose
// connection closes (router.ConnWatch).
func onHosts(t *testing.T, sm *sessionMarket, st *bubbleLedger, watch bool) (*recordingTransport, []host.Host) {
	t.Helper()
	gwHost := p2ptest.Host(t)
	hosts := make([]host.Host, len(sm.provs))
	for i, fp := range sm.provs {
		hosts[i] = p2ptest.Host(t, libp2p.Identity(fp.key))
		unregister := infer.Register(hosts[i], infer.ServerConfig{Network: loopNetwork}, func(_ context.Context, req *infer.Request, _ peer.ID, send func(*infer.TokenFrame) error) (*infer.FinalFrame, error) {
			if err := send(&infer.TokenFrame{Text: "ok", TokenIDs: []int{1000}}); err != nil {
				return nil, err
			}
			sm.net.sealed(fp.id, req.Session)
			return fp.final(req, "ok", 1, script{}), nil
		}, nil)
		t.Cleanup(unregister)
		p2ptest.Connect(t, gwHost, hosts[i])
	}
	rec := &recordingTransport{Transport: HostTransport(gwHost, loopNetwork)}
	cfg := testConfig()
	cfg.FirstTokenTimeout = 30 * time.Second // what a dead primary was waited for
	gw, err := New(cfg, Deps{Transport: rec, Table: sm.table, Ledger: st, Successors: sm.net, Operators: sm.chain, Streams: sm.chain})
	if err != nil {
		t.Fatal(err)
	}
	sm.gw = gw
	if watch {
		w := router.NewConnWatch(gwHost.Network(), sm.table)
		if err := w.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Stop(context.Background()) })
	}
	return rec, hosts
}

// TestKilledPrimaryFailsOverAtOnce: the session's primary is killed (its
// host closed) and the next turn is sent at once, well inside the
// heartbeat window. With the connection watch, the primary is suspected
// as its connection closes and the turn goes straight to the warm
// successor: one attempt. Without it, the attempt at the primary fails
// as unreachable, not by the 30 s first-token bound, and the successor
// serves it in the same race: two attempts. An ordinary request to the
// killed provider (the cheapest) goes the same way.
func TestKilledPrimaryFailsOverAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name           string
		watch, session bool
	}{
		{"session suspected", true, true}, {"session unreachable", false, true},
		{"request suspected", true, false}, {"request unreachable", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			sm := newStandbyMarket(t, st, answer(ms, "ok"))
			rec, hosts := onHosts(t, sm, st, tc.watch)
			p0, p1, p2 := sm.provs[0].id, sm.provs[1].id, sm.provs[2].id
			s := &SessionRequest{Continuity: ContinuityOn}
			if tc.session {
				first := sm.mustTurn(t, s)
				if first.Primary.Peer != p0.String() || first.Successor == nil || first.Successor.Peer != p1.String() {
					t.Fatalf("first turn %+v", first)
				}
				s.ID = first.ID
			}
			n := len(rec.since(0))
			if err := hosts[0].Close(); err != nil {
				t.Fatal(err)
			}
			if tc.watch {
				nodetest.Eventually(t, 10*time.Second, "the primary suspected", func() bool { return sm.table.Suspected(p0) })
			}
			if sm.table.Status(p0) != router.StatusUp {
				t.Fatal("the primary is already down by its heartbeats: the request would not be sent at once")
			}
			var res *Result
			var err error
			if tc.session {
				res, err = sm.turn(t, s)
			} else {
				res, _, err = route(t, sm.market, request())
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Provider.PeerID != p1.String() {
				t.Fatalf("served by %s, want %s", res.Provider.PeerID, p1)
			}
			if info := res.Session; tc.session && (info == nil || info.ServedBy != ServedBySuccessor || info.Primary.Peer != p1.String() ||
				info.Successor == nil || info.Successor.Peer != p2.String()) {
				t.Fatalf("turn after the kill %+v", info)
			}
			cs := rec.since(n)
			want := 1
			if !tc.watch {
				want = 2
				if len(cs) != 2 || cs[0].peer != p0 || !errors.Is(cs[0].err, infer.ErrUnreachable) || errors.Is(cs[0].err, infer.ErrFirstTokenTimeout) {
					t.Fatalf("calls %+v: want the primary unreachable, then the next", cs)
				}
				if !sm.table.Suspected(p0) {
					t.Fatal("an unreachable primary is not suspected")
				}
			}
			if res.Attempts != want || len(cs) != want || cs[want-1].peer != p1 || cs[want-1].err != nil {
				t.Fatalf("attempts %d, calls %+v: want %d ending at %s", res.Attempts, cs, want, p1)
			}
		})
	}
}
