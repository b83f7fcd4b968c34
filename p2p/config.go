package p2p

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// Config configures one libp2p host. The toml/json names are the keys used in
// error messages (p2p.<key>).
type Config struct {
	// Network is the network name, e.g. "devnet". The DHT protocol prefix is
	// "/tenzro/<network>", so nodes of different networks never share a DHT.
	Network string `toml:"-" json:"network"`
	// Listen lists the multiaddrs to listen on (TCP and/or QUIC v1). Empty
	// means "dial out only", which is allowed in DHT client mode.
	Listen []string `toml:"listen" json:"listen" comment:"libp2p listen addresses (TCP and QUIC v1)."`
	// Bootstrap lists multiaddrs ending in /p2p/<peer id>. They are the only
	// peers dialled at start; public IPFS bootstrap nodes are never used.
	Bootstrap []string `toml:"bootstrap" json:"bootstrap" comment:"Peers dialled at start: multiaddrs ending in /p2p/<peer id>. Public IPFS bootstrap nodes are never used."`
	// KeyFile holds the persisted libp2p Ed25519 private key; it is created
	// with mode 0600 on first start. Required unless New gets WithKey.
	KeyFile string `toml:"key_file" json:"key_file" comment:"Persisted libp2p peer key (Ed25519), created on first start."`
	// DHTServer runs the DHT in server mode (validators, providers). Laptops
	// joining as gateways run it in client mode: they query but answer nothing.
	DHTServer bool `toml:"dht_server" json:"dht_server" comment:"Answer DHT queries (validators and providers); laptops only ask."`
	// ConnLow and ConnHigh are the connection manager watermarks: above
	// ConnHigh connections are trimmed down to ConnLow.
	ConnLow  int `toml:"conn_low" json:"conn_low" comment:"Connection manager watermarks."`
	ConnHigh int `toml:"conn_high" json:"conn_high"`
	// NAT is how a node behind a home router is reached: AutoNAT, circuit
	// relays, hole punching.
	NAT NATConfig `toml:"nat" json:"nat"`
}

// DefaultConfig returns the defaults: network "devnet", TCP and QUIC on port
// 4001 on all IPv4 interfaces, no bootstrap peers, DHT client mode,
// connection watermarks 64/192. KeyFile is left for the caller to set.
func DefaultConfig() Config {
	return Config{
		Network:  "devnet",
		Listen:   []string{"/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"},
		ConnLow:  64,
		ConnHigh: 192,
		NAT:      DefaultNATConfig(),
	}
}

var networkRE = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// Validate checks every field and names the offending key in its error, e.g.
// `p2p.listen[1]: invalid multiaddr "x": ...`. It reports all problems
// found, joined.
func (c Config) Validate() error {
	var errs []error
	if !networkRE.MatchString(c.Network) {
		errs = append(errs, fmt.Errorf("p2p.network: must match [a-z0-9-]{1,32}, got %q", c.Network))
	}
	for i, s := range c.Listen {
		if _, err := parseListenAddr(s); err != nil {
			errs = append(errs, fmt.Errorf("p2p.listen[%d]: %w", i, err))
		}
	}
	if len(c.Listen) == 0 && c.DHTServer {
		errs = append(errs, errors.New("p2p.listen: a DHT server needs at least one listen address"))
	}
	if _, err := parseAddrInfos("p2p.bootstrap", c.Bootstrap); err != nil {
		errs = append(errs, err)
	}
	if err := c.NAT.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.ConnLow < 1 {
		errs = append(errs, fmt.Errorf("p2p.conn_low: must be at least 1, got %d", c.ConnLow))
	}
	if c.ConnHigh <= c.ConnLow {
		errs = append(errs, fmt.Errorf("p2p.conn_high: must be greater than p2p.conn_low (%d), got %d", c.ConnLow, c.ConnHigh))
	}
	return errors.Join(errs...)
}

// bootstrapInfos parses the bootstrap list into one AddrInfo per peer.
func (c Config) bootstrapInfos() ([]peer.AddrInfo, error) {
	return parseAddrInfos("p2p.bootstrap", c.Bootstrap)
}

// parseAddrInfos parses a list of peer addresses (the key names it in
// errors, all of them reported) into one AddrInfo per peer, merging
// addresses of the same peer and preserving first-seen order.
func parseAddrInfos(key string, list []string) ([]peer.AddrInfo, error) {
	var out []peer.AddrInfo
	var errs []error
	index := make(map[peer.ID]int)
	for i, s := range list {
		ai, err := parseBootstrapAddr(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", key, i, err))
			continue
		}
		if j, ok := index[ai.ID]; ok {
			out[j].Addrs = append(out[j].Addrs, ai.Addrs...)
			continue
		}
		index[ai.ID] = len(out)
		out = append(out, ai)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func parseListenAddr(s string) (ma.Multiaddr, error) {
	m, err := ma.NewMultiaddr(s)
	if err != nil {
		return nil, fmt.Errorf("invalid multiaddr %q: %w", s, err)
	}
	if _, id := peer.SplitAddr(m); id != "" {
		return nil, fmt.Errorf("listen address %q must not contain /p2p/", s)
	}
	if err := checkTransport(m, false); err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	return m, nil
}

func parseBootstrapAddr(s string) (peer.AddrInfo, error) {
	m, err := ma.NewMultiaddr(s)
	if err != nil {
		return peer.AddrInfo{}, fmt.Errorf("invalid multiaddr %q: %w", s, err)
	}
	transport, id := peer.SplitAddr(m)
	if id == "" {
		return peer.AddrInfo{}, fmt.Errorf("missing /p2p/ peer id in %q", s)
	}
	if len(transport) == 0 {
		return peer.AddrInfo{}, fmt.Errorf("no transport address before /p2p/ in %q", s)
	}
	if err := checkTransport(transport, true); err != nil {
		return peer.AddrInfo{}, fmt.Errorf("%q: %w", s, err)
	}
	return peer.AddrInfo{ID: id, Addrs: []ma.Multiaddr{transport}}, nil
}

// checkTransport accepts exactly what this host can listen on or dial:
// ip4|ip6 (plus dns names when dialling) followed by /tcp/PORT or
// /udp/PORT/quic-v1. A bare /dnsaddr/NAME is accepted for dialling; it
// resolves to such addresses.
func checkTransport(m ma.Multiaddr, dial bool) error {
	const want = "want /ip4|ip6/HOST/tcp/PORT or /ip4|ip6/HOST/udp/PORT/quic-v1"
	codes := make([]int, 0, len(m))
	for _, c := range m {
		codes = append(codes, c.Code())
	}
	if len(codes) == 0 {
		return errors.New("empty address")
	}
	switch codes[0] {
	case ma.P_IP4, ma.P_IP6:
	case ma.P_DNS, ma.P_DNS4, ma.P_DNS6:
		if !dial {
			return errors.New("listen address must use an IP, not a DNS name")
		}
	case ma.P_DNSADDR:
		if dial && len(codes) == 1 {
			return nil
		}
		return errors.New("unsupported transport: " + want)
	default:
		return errors.New("unsupported transport: " + want)
	}
	rest := codes[1:]
	switch {
	case len(rest) == 1 && rest[0] == ma.P_TCP:
		return nil
	case len(rest) == 2 && rest[0] == ma.P_UDP && rest[1] == ma.P_QUIC_V1:
		return nil
	}
	return errors.New("unsupported transport: " + want)
}
