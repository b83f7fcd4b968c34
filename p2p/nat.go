package p2p

import (
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/autorelay"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
)

// Reachability modes of NATConfig.Reachability.
const (
	// ReachAuto lets AutoNAT find out: peers are asked to dial back.
	ReachAuto = "auto"
	// ReachPublic is a server known to be reachable (validators, devnets
	// on loopback, where AutoNAT never calls an address public).
	ReachPublic = "public"
	// ReachPrivate is a machine known to be behind NAT: it reserves a relay
	// slot at once instead of after AutoNAT's first verdict.
	ReachPrivate = "private"
)

// NATConfig is the [p2p.nat] section: how a node behind a home router is
// reached (DESIGN.md, Stream protocols: "target: NAT traversal").
type NATConfig struct {
	Reachability string `toml:"reachability" json:"reachability" comment:"How this node learns whether it is reachable: \"auto\" (AutoNAT asks peers to dial back), \"public\" (a server with a reachable address), \"private\" (behind NAT: use relays at once)."`
	// AutoNATService answers other nodes' reachability probes. go-libp2p
	// 0.52 still decides a host's reachability (which starts AutoRelay
	// and the relay service) from AutoNAT v1, so both v1 and v2 are served.
	AutoNATService bool `toml:"autonat_service" json:"autonat_service" comment:"Answer other nodes' AutoNAT (v1 and v2) dial-back requests; validators and public nodes do."`
	HolePunching   bool `toml:"hole_punching" json:"hole_punching" comment:"DCUtR hole punching: upgrade a relayed connection to a direct one."`
	// RelayClient runs AutoRelay: while the node is private it keeps
	// reservations at up to two of the relays and announces their
	// /p2p-circuit addresses (identify, DHT provider records).
	RelayClient bool `toml:"relay_client" json:"relay_client" comment:"While private, reserve a slot on a relay and announce its /p2p-circuit addresses (providers, laptop gateways)."`
	// Relays are the relays tried, multiaddrs ending in /p2p/<id>; empty
	// means the bootstrap peers, which are the validators.
	Relays []string           `toml:"relays" json:"relays" comment:"Relays to reserve on: multiaddrs ending in /p2p/<peer id>; empty: the bootstrap peers."`
	Relay  RelayServiceConfig `toml:"relay" json:"relay"`
}

// RelayServiceConfig is [p2p.nat.relay]: the circuit relay v2 this node
// offers. The relay sees only ciphertext (Noise or TLS run end to end over
// the circuit), so no payment token or prompt crosses it in clear.
type RelayServiceConfig struct {
	Enabled bool `toml:"enabled" json:"enabled" comment:"Offer a circuit relay v2 to nodes behind NAT; it runs only while this node is public."`
	// MaxReservations bounds the relay slots held at once.
	MaxReservations      int `toml:"max_reservations" json:"max_reservations" comment:"Relay slots held at once, all peers."`
	MaxReservationsPerIP int `toml:"max_reservations_per_ip" json:"max_reservations_per_ip" comment:"Relay slots held from one IP address."`
	MaxCircuits          int `toml:"max_circuits" json:"max_circuits" comment:"Relayed connections open at once to or from one peer."`
	// ReservationTTL is how long a slot lasts unless refreshed (AutoRelay
	// refreshes it well before).
	ReservationTTL time.Duration `toml:"reservation_ttl" json:"reservation_ttl" comment:"How long a relay slot lasts unless refreshed."`
	// CircuitDuration and CircuitData bound one relayed connection: it is
	// reset after that long or that many bytes in either direction. They
	// are sized for inference through the relay when hole punching fails
	// (a streamed answer of a few thousand tokens is well under 1 MiB), not
	// for libp2p's default 2 min / 128 KiB, which only covers the punch.
	CircuitDuration time.Duration `toml:"circuit_duration" json:"circuit_duration" comment:"A relayed connection is reset after this long."`
	CircuitData     int64         `toml:"circuit_data" json:"circuit_data" comment:"A relayed connection is reset after this many bytes in either direction."`
}

// DefaultNATConfig is a node that finds out its reachability, uses relays
// and hole punching when private, and offers no relay.
func DefaultNATConfig() NATConfig {
	return NATConfig{
		Reachability: ReachAuto,
		HolePunching: true,
		RelayClient:  true,
		// Empty, not nil: what a written config reads back.
		Relays: []string{},
		Relay: RelayServiceConfig{
			MaxReservations:      128,
			MaxReservationsPerIP: 8,
			MaxCircuits:          16,
			ReservationTTL:       time.Hour,
			CircuitDuration:      10 * time.Minute,
			CircuitData:          32 << 20,
		},
	}
}

// Validate names the offending key, e.g. p2p.nat.relay.max_circuits.
func (c NATConfig) Validate() error {
	var errs []error
	switch c.Reachability {
	case ReachAuto, ReachPublic, ReachPrivate:
	default:
		errs = append(errs, fmt.Errorf("p2p.nat.reachability: want %q, %q or %q, got %q", ReachAuto, ReachPublic, ReachPrivate, c.Reachability))
	}
	if _, err := parseAddrInfos("p2p.nat.relays", c.Relays); err != nil {
		errs = append(errs, err)
	}
	r := c.Relay
	for _, f := range []struct {
		key string
		v   int64
		min int64
	}{
		{"max_reservations", int64(r.MaxReservations), 1},
		{"max_reservations_per_ip", int64(r.MaxReservationsPerIP), 1},
		{"max_circuits", int64(r.MaxCircuits), 1},
		{"reservation_ttl", int64(r.ReservationTTL), int64(time.Minute)},
		{"circuit_duration", int64(r.CircuitDuration), int64(time.Second)},
		{"circuit_data", r.CircuitData, 64 << 10},
	} {
		if f.v < f.min {
			errs = append(errs, fmt.Errorf("p2p.nat.relay.%s: must be at least %d, got %d", f.key, f.min, f.v))
		}
	}
	if r.MaxReservationsPerIP > r.MaxReservations && r.MaxReservations >= 1 {
		errs = append(errs, fmt.Errorf("p2p.nat.relay.max_reservations_per_ip: %d exceeds max_reservations %d", r.MaxReservationsPerIP, r.MaxReservations))
	}
	return errors.Join(errs...)
}

// relayBackoff is how long AutoRelay leaves a relay that refused a slot
// (not public yet, full) before asking it again; libp2p's hour is too long
// for a network whose validators start in any order.
const relayBackoff = time.Minute

// options are the libp2p options of c. relays are the parsed relay list
// (self removed); m takes the reservations and hole punches.
func (c NATConfig) options(relays []peer.AddrInfo, m *natMetrics) []libp2p.Option {
	// AutoNAT v2 tells which of the node's addresses are reachable; in
	// go-libp2p it comes with its server half, which is rate limited.
	opts := []libp2p.Option{libp2p.EnableAutoNATv2()}
	switch c.Reachability {
	case ReachPublic:
		opts = append(opts, libp2p.ForceReachabilityPublic())
	case ReachPrivate:
		opts = append(opts, libp2p.ForceReachabilityPrivate())
	}
	if c.AutoNATService {
		opts = append(opts, libp2p.EnableNATService())
	}
	if c.HolePunching {
		opts = append(opts, libp2p.EnableHolePunching(holepunch.WithMetricsTracer(m.punchTracer())))
	}
	if c.RelayClient && len(relays) > 0 {
		opts = append(opts, libp2p.EnableAutoRelayWithStaticRelays(relays,
			// Reserve as soon as one relay answers rather than waiting for
			// all of them (a static list otherwise waits for every entry,
			// up to AutoRelay's 3 min boot delay); two slots for redundancy.
			autorelay.WithMinCandidates(1),
			autorelay.WithNumRelays(min(2, len(relays))),
			autorelay.WithBackoff(relayBackoff),
			autorelay.WithMetricsTracer(m.relayTracer())))
	}
	if c.Relay.Enabled {
		r := c.Relay
		res := relayv2.DefaultResources()
		res.MaxReservations = r.MaxReservations
		res.MaxReservationsPerIP = r.MaxReservationsPerIP
		res.MaxCircuits = r.MaxCircuits
		res.ReservationTTL = r.ReservationTTL
		res.Limit = &relayv2.RelayLimit{Duration: r.CircuitDuration, Data: r.CircuitData}
		opts = append(opts, libp2p.EnableRelayService(relayv2.WithResources(res)))
	}
	return opts
}

// relayInfos are the relays AutoRelay may use: the configured ones, else
// the bootstrap peers; never this node itself.
func (c Config) relayInfos(self peer.ID) ([]peer.AddrInfo, error) {
	list, key := c.NAT.Relays, "p2p.nat.relays"
	if len(list) == 0 {
		list, key = c.Bootstrap, "p2p.bootstrap"
	}
	all, err := parseAddrInfos(key, list)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, ai := range all {
		if ai.ID != self {
			out = append(out, ai)
		}
	}
	return out, nil
}
