package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/internal/wan"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/internal/netlab"
)

// TestWANNATTraversal runs a devnet in network namespaces: the validator
// (relay, AutoNAT server) on the public internet, provider-0 behind an
// easy NAT, provider-1 behind a hard one, the gateway behind an easy NAT
// of its own (a laptop). Each provider is found and serves a paid call
// pinned to it that settles on chain; the easy one ends on a direct
// connection made by hole punching, the hard one stays on the relay,
// where punching failed. Cleanup asserts every process stopped and every
// namespace (so every veth and iptables rule) is gone.
func TestWANNATTraversal(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	begin := time.Now()
	w, err := wan.Up(ctx, bin, t.TempDir(), "tzwan", wan.Spec{Validators: 1, Providers: 2, Gateways: 1,
		NAT: map[string]netlab.NAT{"provider-0": netlab.EasyNAT, "provider-1": netlab.HardNAT, "gateway-0": netlab.EasyNAT}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			for _, n := range w.Nodes {
				b, _ := os.ReadFile(filepath.Join(n.Home, "node.log"))
				t.Logf("%s (%s, %s): last lines of node.log:\n%s", n.Name, n.Host.NS, n.Host.IP, devproc.Tail(string(b), 25))
			}
		}
	})
	t.Logf("devnet written, stopped and started again in namespaces: %s", time.Since(begin).Round(time.Millisecond))
	gw, v := w.Node("gateway-0"), w.Node("validator-0")
	easy, hard := w.Node("provider-0"), w.Node("provider-1")

	// Found and up at the gateway, through the relay the first time.
	for _, p := range []*wan.Node{easy, hard} {
		if d, ok := devproc.WaitUntil(60*time.Second, 200*time.Millisecond, func() bool { return wanStatus(gw, peerOf(p.NodeEntry)) == "up" }); !ok {
			t.Fatalf("%s not up at the gateway after %s (status %q)", p.Name, d.Round(time.Second), wanStatus(gw, peerOf(p.NodeEntry)))
		}
	}
	t.Logf("both providers up at the gateway: %s", time.Since(begin).Round(time.Millisecond))
	// A paid call pinned to each; a record each, settled on chain.
	want := map[string]string{} // request digest → provider
	for i, p := range []*wan.Node{easy, hard} {
		// Up (its heartbeats reach the gateway through the validator's
		// gossip) is not reachable: a provider behind NAT can be dialled
		// only once it holds a relay slot and the gateway has learnt its
		// circuit address (identify, the DHT), a moment later, and a
		// gateway just started answers 503 warming_up until it has heard
		// an offer. Such a call fails unpaid, so the first one is retried.
		if d, ok := devproc.WaitUntil(60*time.Second, 200*time.Millisecond, func() bool { return wanMetric(p, "tenzro_p2p_relay_reservations") >= 1 }); !ok {
			t.Fatalf("%s holds no relay slot after %s", p.Name, d.Round(time.Second))
		}
		var r *signedRecord
		var errs []string
		if d, ok := devproc.WaitUntil(30*time.Second, 300*time.Millisecond, func() bool {
			var err error
			if r, err = wanPaidChat(ctx, gw, w.M, peerOf(p.NodeEntry), i); err != nil {
				errs = append(errs, err.Error())
			}
			return err == nil
		}); !ok {
			t.Fatalf("no paid call to %s succeeded in %s: %v", p.Name, d.Round(time.Second), errs)
		}
		t.Logf("paid call to %s served after %d failed attempts %v", p.Name, len(errs), errs)
		want[r.RequestDigest] = p.Name
	}
	settled := map[string]int{}
	if d, ok := devproc.WaitUntil(60*time.Second, 250*time.Millisecond, func() bool {
		var pv chainapi.PaymentsView
		if v.RPC("tenzro_getPayments", chainapi.PaymentsParams{Payer: w.M.BuyerChainAccount}, &pv, 3*time.Second) != nil {
			return false
		}
		clear(settled)
		for _, r := range pv.Records {
			settled[r.RequestDigest]++
		}
		return settledAll(settled, want)
	}); !ok {
		t.Fatalf("after %s settled %v, want every one of %v", d.Round(time.Second), settled, want)
	}
	t.Logf("both calls settled: %s", time.Since(begin).Round(time.Millisecond))
	for d, name := range want {
		if settled[d] != 1 {
			t.Errorf("%s's record %s settled %d times, want once", name, d, settled[d])
		}
	}

	// Connection types: the easy NAT's provider ends direct, by a hole
	// punch; the hard NAT's stays relayed after its punch failed.
	if d, ok := devproc.WaitUntil(60*time.Second, 250*time.Millisecond, func() bool {
		r, ok, _ := wanRelayed(gw, peerOf(easy.NodeEntry))
		return ok && !r
	}); !ok {
		t.Errorf("%s still relayed at the gateway after %s; hole punches: %s %v, gateway %v", easy.Name, d.Round(time.Second),
			easy.Name, wanPunches(easy), wanPunches(gw))
	}
	// The direct connection runs to the easy router's public address: the
	// mapping the punch opened (the router lets in nothing unasked).
	if _, _, addrs := wanRelayed(gw, peerOf(easy.NodeEntry)); !slices.ContainsFunc(addrs, func(a string) bool {
		return strings.HasPrefix(a, "/ip4/"+easy.Host.Public.String()+"/") && !strings.Contains(a, "p2p-circuit")
	}) {
		t.Errorf("gateway's connections to %s: %v, want a direct one to its router %s", easy.Name, addrs, easy.Host.Public)
	}
	if n := wanPunches(easy)["direct"] + wanPunches(gw)["direct"]; n < 1 {
		t.Errorf("no hole punch to %s succeeded (%s %v, gateway %v)", easy.Name, easy.Name, wanPunches(easy), wanPunches(gw))
	}
	if d, ok := devproc.WaitUntil(60*time.Second, 250*time.Millisecond, func() bool { return wanPunches(hard)["failed"] >= 1 }); !ok {
		t.Errorf("no failed hole punch from %s after %s: %v", hard.Name, d.Round(time.Second), wanPunches(hard))
	}
	if r, ok, _ := wanRelayed(gw, peerOf(hard.NodeEntry)); !ok || !r {
		t.Errorf("%s at the gateway: connected %v relayed %v, want a relayed connection", hard.Name, ok, r)
	}
	if n := wanPunches(hard)["direct"]; n != 0 {
		t.Errorf("%v hole punches from behind the hard NAT succeeded, want none", n)
	}
	t.Logf("hole punches: %s %v, %s %v, gateway %v", easy.Name, wanPunches(easy), hard.Name, wanPunches(hard), wanPunches(gw))
}

// wanPaidChat is one paid call at the gateway n, pinned to peer.
func wanPaidChat(ctx context.Context, n *wan.Node, m devnet.Manifest, peer string, i int) (*signedRecord, error) {
	return paidChat(ctx, n.API, m.BuyerToken, m.Model, chatOpts{pin: peer, n: i, noHedge: true, client: n.Client(60 * time.Second)})
}

// wanStatus is peer's status at n ("" if unknown).
func wanStatus(n *wan.Node, peer string) string {
	var ps []struct {
		PeerID string `json:"peer_id"`
		Status string `json:"status"`
	}
	if n.RPC("tenzro_listProviders", nil, &ps, 3*time.Second) != nil {
		return ""
	}
	for _, p := range ps {
		if p.PeerID == peer {
			return p.Status
		}
	}
	return ""
}

// wanRelayed is whether n's connections to peer all run through a relay,
// whether n is connected to it at all, and the connections' remote
// addresses.
func wanRelayed(n *wan.Node, peer string) (relayed, connected bool, addrs []string) {
	var ps []struct {
		PeerID  string   `json:"peer_id"`
		Addrs   []string `json:"addrs"`
		Relayed bool     `json:"relayed"`
	}
	if n.RPC("tenzro_listPeers", nil, &ps, 3*time.Second) != nil {
		return false, false, nil
	}
	for _, p := range ps {
		if p.PeerID == peer {
			return p.Relayed, true, p.Addrs
		}
	}
	return false, false, nil
}

// wanPunches sums n's tenzro_p2p_hole_punches_total by result.
func wanPunches(n *wan.Node) map[string]float64 {
	out := map[string]float64{}
	resp, err := n.Client(3 * time.Second).Get(n.API + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	_ = devproc.Lines(resp.Body, "tenzro_p2p_hole_punches_total{", func(rest string) bool {
		labels, val, _ := strings.Cut(rest, "} ")
		f, _ := strconv.ParseFloat(val, 64)
		for _, r := range []string{"direct", "failed"} {
			if strings.Contains(labels, `result="`+r+`"`) {
				out[r] += f
			}
		}
		return true
	})
	return out
}

// wanMetric is the value of the unlabelled series name at n's /metrics
// (-1 if n does not answer or has none).
func wanMetric(n *wan.Node, name string) float64 {
	resp, err := n.Client(3 * time.Second).Get(n.API + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	v := -1.0
	_ = devproc.Lines(resp.Body, name+" ", func(rest string) bool {
		v, _ = strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return false
	})
	return v
}
