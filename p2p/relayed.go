package p2p

import (
	"context"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/autorelay"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
)

// Relayed reports whether c runs through a circuit relay. A relay with
// limits marks its connections Limited; one without marks nothing, so
// the remote address (…/p2p-circuit) is checked too.
func Relayed(c network.Conn) bool {
	if c.Stat().Limited {
		return true
	}
	for _, comp := range c.RemoteMultiaddr() {
		if comp.Code() == ma.P_CIRCUIT {
			return true
		}
	}
	return false
}

// RelayedTo reports whether every open connection of h to p is relayed:
// a stream to p would cross a relay. False when there is none.
func RelayedTo(h host.Host, p peer.ID) bool {
	conns := h.Network().ConnsToPeer(p)
	for _, c := range conns {
		if !Relayed(c) {
			return false
		}
	}
	return len(conns) > 0
}

// AllowRelayed lets a stream opened under ctx use a relayed (limited)
// connection. Without it go-libp2p opens no stream over a relayed
// connection: it waits for hole punching to make a direct one, and fails
// if none comes. The network's streams allow it (a provider behind a hard
// NAT is reachable only through its relay) and go-libp2p still prefers a
// direct connection when there is one; callers say so with Relayed on the
// stream's connection.
func AllowRelayed(ctx context.Context, why string) context.Context {
	return network.WithAllowLimitedConn(ctx, why)
}

// natMetrics are the series of NAT traversal on one host:
// tenzro_p2p_relayed_connections (open connections through a relay),
// tenzro_p2p_relay_reservations (relay slots this node holds; a private
// node with none cannot be dialled) and tenzro_p2p_hole_punches_total by
// side and result.
type natMetrics struct {
	// host is set once the libp2p host exists, after its tracers (which
	// are its options) were made.
	host         atomic.Pointer[host.Host]
	reservations atomic.Int64
	punches      *prometheus.CounterVec
}

func newNATMetrics(reg prometheus.Registerer) *natMetrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &natMetrics{punches: NewSeries(reg, "p2p").CounterVec("hole_punches_total",
		"DCUtR hole punches finished, by side (initiator/receiver) and result (direct/failed).", "side", "result")}
	Register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "tenzro", Subsystem: "p2p",
		Name: "relayed_connections", Help: "Open connections that run through a circuit relay."},
		func() float64 {
			h := m.host.Load()
			if h == nil {
				return 0
			}
			n := 0
			for _, c := range (*h).Network().Conns() {
				if Relayed(c) {
					n++
				}
			}
			return float64(n)
		}))
	Register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "tenzro", Subsystem: "p2p",
		Name: "relay_reservations", Help: "Relay slots this node holds (AutoRelay); a private node with none cannot be dialled."},
		func() float64 { return float64(m.reservations.Load()) }))
	return m
}

func (m *natMetrics) relayTracer() autorelay.MetricsTracer {
	return relayTracer{MetricsTracer: autorelay.NewMetricsTracer(), m: m}
}

func (m *natMetrics) punchTracer() holepunch.MetricsTracer {
	return punchTracer{MetricsTracer: holepunch.NewMetricsTracer(), m: m}
}

// relayTracer counts AutoRelay's reservations into natMetrics and passes
// every event on to libp2p's own tracer.
type relayTracer struct {
	autorelay.MetricsTracer
	m *natMetrics
}

func (t relayTracer) ReservationOpened(n int) {
	t.m.reservations.Add(int64(n))
	t.MetricsTracer.ReservationOpened(n)
}

func (t relayTracer) ReservationEnded(n int) {
	t.m.reservations.Add(-int64(n))
	t.MetricsTracer.ReservationEnded(n)
}

func (t relayTracer) ReservationRequestFinished(refresh bool, err error) {
	if !refresh && err == nil {
		t.m.reservations.Add(1)
	}
	t.MetricsTracer.ReservationRequestFinished(refresh, err)
}

// punchTracer counts finished hole punches and passes them on to
// libp2p's own tracer.
type punchTracer struct {
	holepunch.MetricsTracer
	m *natMetrics
}

func (t punchTracer) HolePunchFinished(side string, attempt int, theirs, ours []ma.Multiaddr, direct network.ConnMultiaddrs) {
	result := "direct"
	if direct == nil {
		result = "failed"
	}
	t.m.punches.WithLabelValues(side, result).Inc()
	t.MetricsTracer.HolePunchFinished(side, attempt, theirs, ours, direct)
}

// RelayReservations is how many relay slots this host holds.
func (h *Host) RelayReservations() int { return int(h.nat.reservations.Load()) }
