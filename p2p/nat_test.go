package p2p

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/client"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
)

const echoProto = protocol.ID("/tenzro/test/echo/1")

// waitFor checks cond until it holds or the deadline passes; the events
// it waits on (a relay reservation) have no notification of their own.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("%s: not within %s", what, within)
		}
	}
}

// tcpAddr is h's first TCP address, ending in /p2p/<id>.
func tcpAddr(t *testing.T, h *Host) string {
	t.Helper()
	for _, a := range h.Addrs() {
		if strings.Contains(a, "/tcp/") {
			return a
		}
	}
	t.Fatalf("no tcp address in %v", h.Addrs())
	return ""
}

// natTrio is a public relay R, a provider P that believes itself behind
// NAT and holds a slot at R, and a gateway C. C knows P only by its
// circuit address through R.
type natTrio struct {
	r, p, c *Host
	creg    *prometheus.Registry
	circuit ma.Multiaddr
}

func newNATTrio(t *testing.T) natTrio {
	t.Helper()
	rcfg := testConfig(t, true, nil)
	rcfg.NAT.Reachability = ReachPublic
	rcfg.NAT.AutoNATService = true
	rcfg.NAT.Relay.Enabled = true
	rcfg.NAT.Relay.CircuitData = 1 << 20
	rcfg.NAT.Relay.CircuitDuration = 3 * time.Minute
	r := newTestHost(t, rcfg)
	relay := tcpAddr(t, r)

	pcfg := testConfig(t, true, nil)
	pcfg.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	pcfg.NAT.Reachability = ReachPrivate
	pcfg.NAT.Relays = []string{relay}
	p := newTestHost(t, pcfg)
	if p.DHT().Mode() != dht.ModeClient {
		t.Errorf("a private node's DHT runs in mode %v, want client", p.DHT().Mode())
	}
	p.Host().SetStreamHandler(echoProto, func(s network.Stream) {
		b, err := ReadFrame(bufio.NewReader(s), 64)
		if err == nil {
			err = WriteFrame(s, b)
		}
		if err != nil {
			_ = s.Reset()
			return
		}
		_ = s.Close()
	})
	waitFor(t, "P's reservation at R", 8*time.Second, func() bool { return p.RelayReservations() >= 1 })

	creg := prometheus.NewRegistry()
	c := newTestHost(t, testConfig(t, false, nil), WithRegisterer(creg))
	return natTrio{r: r, p: p, c: c, creg: creg,
		circuit: ma.StringCast(relay + "/p2p-circuit")}
}

// TestReachedThroughRelay: C reaches P, whose direct address it never
// learns, through R; the connection is relayed and limited, streams
// refuse it unless allowed, and Call (which allows it) is answered.
func TestReachedThroughRelay(t *testing.T) {
	n := newNATTrio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	ch, pid := n.c.Host(), n.p.ID()
	if known := ch.Peerstore().Addrs(pid); len(known) != 0 {
		t.Fatalf("C knows P's addresses before the relay: %v", known)
	}
	if err := ch.Connect(ctx, peer.AddrInfo{ID: pid, Addrs: []ma.Multiaddr{n.circuit}}); err != nil {
		t.Fatalf("connect to P through R: %v", err)
	}
	conns := ch.Network().ConnsToPeer(pid)
	if len(conns) == 0 {
		t.Fatal("no connection to P")
	}
	for _, c := range conns {
		st := c.Stat()
		if !Relayed(c) || !st.Limited {
			t.Errorf("connection to P via %s: relayed %v limited %v, want both", c.RemoteMultiaddr(), Relayed(c), st.Limited)
		}
		// R's [p2p.nat.relay] limits are what the circuit carries.
		if st.Extra[client.StatLimitData] != uint64(1<<20) || st.Extra[client.StatLimitDuration] != 3*time.Minute {
			t.Errorf("circuit limits %v / %v, want 1 MiB / 3m", st.Extra[client.StatLimitData], st.Extra[client.StatLimitDuration])
		}
	}
	if !RelayedTo(ch, pid) || RelayedTo(ch, n.r.ID()) {
		t.Errorf("RelayedTo: P %v (want true), R %v (want false)", RelayedTo(ch, pid), RelayedTo(ch, n.r.ID()))
	}
	if got := gauge(t, n.creg, "tenzro_p2p_relayed_connections"); got != float64(len(conns)) {
		t.Errorf("tenzro_p2p_relayed_connections = %v, want %d", got, len(conns))
	}
	for _, pi := range n.c.Peers() {
		if pi.Relayed != (pi.ID == pid) {
			t.Errorf("Peers: %s relayed %v", pi.ID, pi.Relayed)
		}
	}

	// Without the allowance go-libp2p waits for a direct connection, which
	// nothing here makes.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	if s, err := ch.NewStream(short, pid, echoProto); err == nil {
		_ = s.Reset()
		t.Fatal("a stream over the relayed connection opened without AllowRelayed")
	}

	answer, sent, err := Call(ctx, ch, pid, echoProto, ServiceInfer, []byte("hello"), 64)
	if err != nil || string(answer) != "hello" || sent != 5 {
		t.Fatalf("Call through the relay = %q, %d, %v; want hello, 5, nil", answer, sent, err)
	}
	if !RelayedTo(n.p.Host(), n.c.ID()) {
		t.Error("P does not see its connection from C as relayed")
	}
}

// gauge is the value of the gauge name on reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s not registered", name)
	return 0
}
