package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
)

// followSpec is how a new home follows an existing chain.
type followSpec struct {
	genesis   string   // the chain's genesis.json, copied into the chain home
	peers     []string // CometBFT persistent peers, id@host:port
	peersFlag string   // the flag that gave them, for errors
	p2pListen string   // CometBFT p2p listen address; "" = a free port
	// network: take the network name from the chain ID (tenzro-<network>)
	// unless the operator named one.
	networkFromChain bool
	sync             syncFlags // state sync through the chain's RPC servers
	out              io.Writer // where the state sync check is told; nil = nowhere
}

// followChain sets cfg up as a chain follower of s.genesis through s.peers
// and copies the genesis into the chain home; it returns the genesis. It
// is the one place init and join make a follower.
func followChain(cfg *node.Config, s followSpec) (*cmttypes.GenesisDoc, error) {
	doc, err := cmttypes.GenesisDocFromFile(s.genesis)
	if err != nil {
		return nil, fmt.Errorf("--genesis: %w", err)
	}
	if len(s.peers) == 0 {
		return nil, fmt.Errorf("--genesis needs %s: no chain peer to follow it through", s.peersFlag)
	}
	for _, p := range s.peers {
		if err := checkChainPeer(p); err != nil {
			return nil, fmt.Errorf("%s: %w", s.peersFlag, err)
		}
	}
	out := s.out
	if out == nil {
		out = io.Discard
	}
	if err := s.sync.apply(out, &cfg.Chain, doc.ChainID); err != nil {
		return nil, err
	}
	if s.networkFromChain {
		// Devnet and testnet chains are named tenzro-<network>.
		if n, ok := strings.CutPrefix(doc.ChainID, "tenzro-"); ok && n != "" {
			cfg.Network = n
		}
	}
	listen := s.p2pListen
	if listen == "" {
		if listen, err = freeLoopbackTCP(); err != nil {
			return nil, fmt.Errorf("--chain-p2p-listen: %w", err)
		}
	}
	cfg.Chain.Enabled, cfg.Chain.Role = true, consensus.ChainFollower
	cfg.Chain.P2PListen, cfg.Chain.PersistentPeers = listen, s.peers
	raw, err := os.ReadFile(s.genesis)
	if err != nil {
		return nil, fmt.Errorf("--genesis: %w", err)
	}
	dst := filepath.Join(cfg.Path(cfg.Chain.Home), "config", "genesis.json")
	if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, raw) {
		return doc, nil // a second init of the same home (--force)
	}
	if err := writePrivate(dst, raw, 0o644); err != nil {
		return nil, err
	}
	return doc, nil
}

// checkChainPeer checks one CometBFT peer address, id@host:port with a
// 40 hex digit node ID.
func checkChainPeer(p string) error {
	id, addr, ok := strings.Cut(p, "@")
	if !ok || len(id) != 40 || strings.Trim(strings.ToLower(id), "0123456789abcdef") != "" {
		return fmt.Errorf("chain peer %q: want NODE_ID@HOST:PORT with a 40 hex digit CometBFT node ID", p)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" || port == "0" || strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("chain peer %q: want NODE_ID@HOST:PORT with a port other than 0", p)
	}
	return nil
}

// ports reserves free ports by holding a listener on each until release,
// so no two of them are the same.
type ports struct{ closers []func() error }

func (p *ports) tcp(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("init: reserve a port: %w", err)
	}
	p.closers = append(p.closers, l.Close)
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (p *ports) udp(host string) (int, error) {
	c, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("init: reserve a port: %w", err)
	}
	p.closers = append(p.closers, c.Close)
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

func (p *ports) release() {
	for _, c := range p.closers {
		_ = c()
	}
}

// freePorts gives cfg free ports for everything it listens on: the API on
// loopback, libp2p TCP and QUIC and CometBFT p2p on every interface, and
// CometBFT's own RPC on loopback. Ports are reserved together, so two
// homes made on one host never share one (unless a third program takes a
// port between init and start).
func freePorts(cfg *node.Config) error {
	var p ports
	defer p.release()
	var api, tcp, udp, chainP2P, chainRPC int
	for _, r := range []struct {
		port *int
		take func(host string) (int, error)
		host string
	}{
		{&api, p.tcp, "127.0.0.1"},
		{&tcp, p.tcp, "0.0.0.0"},
		{&udp, p.udp, "0.0.0.0"},
		{&chainP2P, p.tcp, "0.0.0.0"},
		{&chainRPC, p.tcp, "127.0.0.1"},
	} {
		var err error
		if *r.port, err = r.take(r.host); err != nil {
			return err
		}
	}
	cfg.API.Listen = fmt.Sprintf("127.0.0.1:%d", api)
	cfg.P2P.Listen = []string{fmt.Sprintf("/ip4/0.0.0.0/tcp/%d", tcp), fmt.Sprintf("/ip4/0.0.0.0/udp/%d/quic-v1", udp)}
	cfg.Chain.P2PListen = fmt.Sprintf("tcp://0.0.0.0:%d", chainP2P)
	cfg.Chain.RPCListen = fmt.Sprintf("tcp://127.0.0.1:%d", chainRPC)
	return nil
}

// freeChainP2P is a free CometBFT p2p port on every interface, as
// tcp://0.0.0.0:PORT: the port init writes for a home without one given.
func freeChainP2P() (string, error) {
	var p ports
	defer p.release()
	port, err := p.tcp("0.0.0.0")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("tcp://0.0.0.0:%d", port), nil
}
