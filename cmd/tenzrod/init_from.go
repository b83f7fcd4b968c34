package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
)

// chainSource is what `init --chain-from` learned from a running node's
// API: the chain to follow and how to reach the network.
type chainSource struct {
	api       string // the node's API URL, as given
	info      node.NodeInfo
	peers     []string // CometBFT persistent peers, id@host:port
	bootstrap []string // libp2p multiaddrs ending in /p2p/<id>
	params    ledger.Params
}

// chainFrom asks the node at api (tenzro_nodeInfo, tenzro_getParams) how
// to follow its chain.
func chainFrom(ctx context.Context, api string) (chainSource, error) {
	src := chainSource{api: strings.TrimRight(api, "/")}
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return src, fmt.Errorf("--chain-from %q: want a node's API URL, http://host:port", api)
	}
	c, err := shell.NewClient(src.api)
	if err != nil {
		return src, fmt.Errorf("--chain-from: %w", err)
	}
	if err := callInto(ctx, c, "tenzro_nodeInfo", nil, &src.info); err != nil {
		return src, fmt.Errorf("--chain-from %s: %w", api, err)
	}
	if src.info.ChainID == "" {
		return src, fmt.Errorf("--chain-from %s: that node runs no chain (its chain_id is empty); point it at a node with [chain] enabled", api)
	}
	if err := callInto(ctx, c, "tenzro_getParams", nil, &src.params); err != nil {
		return src, fmt.Errorf("--chain-from %s: %w", api, err)
	}
	host := u.Hostname()
	src.peers = sourcePeers(src.info, host)
	if len(src.peers) == 0 {
		return src, fmt.Errorf("--chain-from %s: the node names no chain peer reachable from here (chain_node_id %q, chain_p2p_listen %q); give --persistent-peers",
			api, src.info.ChainNodeID, src.info.ChainP2PListen)
	}
	src.bootstrap = sourceBootstrap(src.info.ListenAddrs, src.info.PeerID, host)
	if len(src.bootstrap) == 0 {
		return src, fmt.Errorf("--chain-from %s: the node lists no libp2p address reachable from here; give --bootstrap", api)
	}
	return src, nil
}

// sourcePeers are the chain peers a node's info offers, seen from a
// machine that reaches the node at apiHost: the node itself (its listen
// host, or apiHost where it listens on every interface) first, then its
// own persistent peers. Loopback addresses are kept only when apiHost is
// loopback too (they name the node's machine, not this one); entries that
// are no valid peer address are dropped.
func sourcePeers(info node.NodeInfo, apiHost string) []string {
	local := isLoopbackHost(apiHost)
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if seen[p] || checkChainPeer(p) != nil {
			return
		}
		_, addr, _ := strings.Cut(p, "@")
		if host, _, _ := net.SplitHostPort(addr); isLoopbackHost(host) && !local {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	if hostPort, ok := strings.CutPrefix(info.ChainP2PListen, "tcp://"); ok && info.ChainNodeID != "" {
		if host, port, err := net.SplitHostPort(hostPort); err == nil {
			if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
				host = apiHost
			}
			add(strings.ToLower(info.ChainNodeID) + "@" + net.JoinHostPort(host, port))
		}
	}
	for _, p := range info.ChainPeers {
		add(p)
	}
	return out
}

// sourceBootstrap are the node's libp2p addresses usable as bootstrap
// peers from a machine that reaches it at apiHost: full multiaddrs of
// peerID, loopback ones only when apiHost is loopback (on the node's own
// machine every address it lists works).
func sourceBootstrap(addrs []string, peerID, apiHost string) []string {
	local := isLoopbackHost(apiHost)
	var out []string
	for _, s := range addrs {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			continue
		}
		if id, err := a.ValueForProtocol(ma.P_P2P); err != nil || id != peerID {
			continue
		}
		if !local && manet.IsIPLoopback(a) {
			continue
		}
		out = append(out, a.String())
	}
	return out
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
