package p2ptest

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	"github.com/prometheus/client_golang/prometheus"
)

// Host returns a libp2p host on loopback TCP without relay, closed when
// the test ends; opts come after those (an identity, say).
func Host(t testing.TB, opts ...libp2p.Option) host.Host {
	t.Helper()
	h, err := libp2p.New(append([]libp2p.Option{libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// Connect dials b from a.
func Connect(t testing.TB, a, b host.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Connect(ctx, peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

// Pair returns two connected loopback hosts.
func Pair(t testing.TB) (client, server host.Host) {
	t.Helper()
	client, server = Host(t), Host(t)
	Connect(t, client, server)
	return client, server
}

// PanicsMetric is the series of the p2p panic guard, by protocol.
const PanicsMetric = "tenzro_p2p_stream_handler_panics_total"

// Counter is the value of the counter name whose label is value in g (0
// when there is none).
func Counter(t testing.TB, g prometheus.Gatherer, name, label, value string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// MockPair returns two connected hosts of a mock network, closed when the
// test ends: no transport, and no resource manager.
func MockPair(t testing.TB) (a, b host.Host) {
	t.Helper()
	mn, err := mocknet.FullMeshConnected(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mn.Close() })
	return mn.Hosts()[0], mn.Hosts()[1]
}

// Stream opens a stream of proto from client to server, under a deadline
// of 5 s for the whole exchange; the caller resets or closes it.
func Stream(t testing.TB, client host.Host, server peer.ID, proto protocol.ID) network.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := client.NewStream(ctx, server, proto)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.SetDeadline(time.Now().Add(5 * time.Second))
	return s
}
