package wan

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/internal/netlab"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/p2p"
)

// loopback matches a loopback address with its port in the forms a
// config holds: host:port, tcp://host:port, id@host:port and multiaddrs.
var loopback = regexp.MustCompile(`127\.0\.0\.1(:|/tcp/|/udp/)(\d+)`)

// Relocate rewrites the config of each node of m for the host named by
// its node name in hosts: every loopback address but CometBFT's RPC becomes the address of
// the node that listens on that port (the devnet gave each node ports of
// its own), so a node listens on its namespace's address and dials its
// peers (bootstrap, chain peers) at theirs. A node behind NAT is told so
// (p2p.nat.reachability = private): it reserves a relay slot at once
// rather than after AutoNAT's first verdict. It returns each node's API
// URL, by name.
func Relocate(m devnet.Manifest, hosts map[string]netlab.Host) (map[string]string, error) {
	cfgs := make([]node.Config, len(m.Nodes))
	owner := map[string]string{} // "tcp:port" / "udp:port" → owner's IP
	for i, n := range m.Nodes {
		h, ok := hosts[n.Name]
		if !ok {
			return nil, fmt.Errorf("wan: no host for %s", n.Name)
		}
		cfg, err := node.Load(n.Home)
		if err != nil {
			return nil, fmt.Errorf("wan: %w", err)
		}
		cfgs[i] = cfg
		for _, s := range append([]string{cfg.API.Listen, cfg.Chain.P2PListen}, cfg.P2P.Listen...) {
			for _, mm := range loopback.FindAllStringSubmatch(s, -1) {
				owner[proto(mm[1])+mm[2]] = h.IP.String()
			}
		}
	}
	var bad []string
	move := func(s string) string {
		return loopback.ReplaceAllStringFunc(s, func(a string) string {
			mm := loopback.FindStringSubmatch(a)
			ip, ok := owner[proto(mm[1])+mm[2]]
			if !ok {
				bad = append(bad, a)
				return a
			}
			return ip + mm[1] + mm[2]
		})
	}
	moveAll := func(ss []string) {
		for j := range ss {
			ss[j] = move(ss[j])
		}
	}
	apis := map[string]string{}
	for i, n := range m.Nodes {
		c := &cfgs[i]
		// CometBFT's RPC stays on loopback (it has no authentication); each
		// namespace has a loopback of its own.
		c.API.Listen, c.Chain.P2PListen = move(c.API.Listen), move(c.Chain.P2PListen)
		moveAll(c.P2P.Listen)
		moveAll(c.P2P.Bootstrap)
		moveAll(c.Chain.PersistentPeers)
		moveAll(c.P2P.NAT.Relays)
		if hosts[n.Name].NAT != nil {
			c.P2P.NAT.Reachability = p2p.ReachPrivate
		}
		if len(bad) > 0 {
			return nil, fmt.Errorf("wan: %s: no node listens on %s", n.Name, strings.Join(bad, ", "))
		}
		if err := node.WriteConfig(*c, true); err != nil {
			return nil, fmt.Errorf("wan: %s: %w", n.Name, err)
		}
		apis[n.Name] = "http://" + c.API.Listen
	}
	return apis, nil
}

// proto keys a port by transport: a TCP and a UDP port of one number may
// belong to two nodes.
func proto(sep string) string {
	if sep == "/udp/" {
		return "udp:"
	}
	return "tcp:"
}
