package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p"
)

// writeGenesis writes a minimal genesis of chainID into dir.
func writeGenesis(t *testing.T, dir, chainID string) string {
	t.Helper()
	doc := cmttypes.GenesisDoc{ChainID: chainID, GenesisTime: time.Now().UTC()}
	if err := doc.ValidateAndComplete(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, chainID+".json")
	if err := doc.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// listenPorts are the ports a home's config listens on, by key, as
// "tcp:PORT" or "udp:PORT".
func listenPorts(t *testing.T, cfg node.Config) map[string]string {
	t.Helper()
	ports := map[string]string{}
	hostPort := func(key, addr string) {
		if addr == "" {
			return
		}
		_, port, err := net.SplitHostPort(strings.TrimPrefix(addr, "tcp://"))
		if err != nil {
			t.Fatalf("%s %q: %v", key, addr, err)
		}
		ports[key] = "tcp:" + port
	}
	hostPort("api.listen", cfg.API.Listen)
	hostPort("chain.p2p_listen", cfg.Chain.P2PListen)
	hostPort("chain.rpc_listen", cfg.Chain.RPCListen)
	for i, a := range cfg.P2P.Listen {
		parts := strings.Split(a, "/") // /ip4/H/tcp|udp/PORT[/quic-v1]
		ports[fmt.Sprintf("p2p.listen[%d]", i)] = parts[3] + ":" + parts[4]
	}
	return ports
}

// TestInitFollowerFlags: each missing or wrong flag is named.
func TestInitFollowerFlags(t *testing.T) {
	g := writeGenesis(t, t.TempDir(), "tenzro-flags")
	peer := strings.Repeat("ab", 20) + "@127.0.0.1:26656"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"peers without genesis", []string{"--persistent-peers", peer}, "need --genesis"},
		{"chain-from without genesis", []string{"--chain-from", "http://127.0.0.1:1"}, "need --genesis"},
		{"genesis alone", []string{"--genesis", g}, "--persistent-peers"},
		{"validator follower", []string{"--genesis", g, "--persistent-peers", peer, "--role", "validator"}, "--role provider or gateway"},
		{"short node id", []string{"--genesis", g, "--persistent-peers", "abc@127.0.0.1:1"}, "--persistent-peers"},
		{"peer port 0", []string{"--genesis", g, "--persistent-peers", strings.Repeat("ab", 20) + "@127.0.0.1:0"}, "--persistent-peers"},
		{"missing genesis file", []string{"--genesis", filepath.Join(t.TempDir(), "none.json"), "--persistent-peers", peer}, "--genesis"},
		{"chain-from not a URL", []string{"--genesis", g, "--chain-from", "127.0.0.1:8545"}, "--chain-from"},
		{"chain-from nobody", []string{"--genesis", g, "--chain-from", "http://127.0.0.1:1"}, "--chain-from"},
	} {
		home := t.TempDir()
		args := append([]string{"init", "--home", home, "--key-backend", "software", "--role", "provider"}, c.args...)
		if _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
		if left, _ := os.ReadDir(home); len(left) != 0 {
			t.Errorf("%s: a refused init left %d entries in the home", c.name, len(left))
		}
	}
}

// TestInitPersistentPeers: init --genesis --persistent-peers writes a
// follower home that loads, with its own genesis copy, an operator key,
// five distinct free ports (none shared with a second home made the same
// way) and the next steps printed; --force rewrites it.
func TestInitPersistentPeers(t *testing.T) {
	g := writeGenesis(t, t.TempDir(), "tenzro-peers")
	peer := strings.Repeat("ab", 20) + "@203.0.113.7:26656"
	seen := map[string]string{}
	for i := range 2 {
		home := filepath.Join(t.TempDir(), "prov")
		args := []string{"init", "--home", home, "--role", "provider", "--key-backend", "software", "--genesis", g, "--persistent-peers", peer}
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
		cfg, err := node.Load(home)
		if err != nil {
			t.Fatal(err)
		}
		if !cfg.Chain.Enabled || cfg.Chain.Role != consensus.ChainFollower || len(cfg.Chain.PersistentPeers) != 1 || cfg.Chain.PersistentPeers[0] != peer || cfg.Network != "peers" {
			t.Fatalf("home %d: chain %+v, network %q", i, cfg.Chain, cfg.Network)
		}
		want, _ := os.ReadFile(g)
		if got, err := os.ReadFile(filepath.Join(home, "chain", "config", "genesis.json")); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("home %d: genesis copy: %v", i, err)
		}
		ports := listenPorts(t, cfg)
		if len(ports) != 5 {
			t.Errorf("home %d listens on %v, want api, 2 libp2p, chain p2p and rpc", i, ports)
		}
		for key, port := range ports {
			if n := port[4:]; n == "0" || n == "26656" || n == "8545" || n == "4001" {
				t.Errorf("home %d: %s is port %s, want a free one chosen at init", i, key, port)
			}
			if other, dup := seen[port]; dup {
				t.Errorf("home %d: %s shares port %s with %s", i, key, port, other)
			}
			seen[port] = fmt.Sprint(i, " ", key)
		}
		for _, w := range []string{"account      ", "tx transfer --api API --key FUNDED_KEY --to ", "tx register --api API --home " + home, "tenzrod provider --home " + home} {
			if !strings.Contains(out, w) {
				t.Errorf("init output lacks %q:\n%s", w, out)
			}
		}
		if _, err := os.Stat(filepath.Join(home, node.AccountKeyFile)); err != nil {
			t.Errorf("no operator key: %v", err)
		}
		if _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), "--force") {
			t.Errorf("a second init without --force: %v", err)
		}
		if out, err := runCLI(t, append(args, "--force")...); err != nil {
			t.Errorf("init --force over the same genesis: %v\n%s", err, out)
		}
	}
}

// TestInitPlainChainPort: a home made without --genesis gets a free
// CometBFT p2p port, another for every home; a validator switched on with
// port 0 (what a config without the key gets) is refused by name.
func TestInitPlainChainPort(t *testing.T) {
	ports := map[string]bool{}
	for range 2 {
		home := t.TempDir()
		if out, err := runCLI(t, "init", "--home", home, "--role", "validator", "--key-backend", "software"); err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
		cfg, err := node.Load(home)
		if err != nil {
			t.Fatal(err)
		}
		p := listenPorts(t, cfg)["chain.p2p_listen"]
		if p == "tcp:0" || p == "tcp:26656" || ports[p] {
			t.Fatalf("chain.p2p_listen port %s (seen %v)", p, ports)
		}
		ports[p] = true
	}
	cfg := node.Default(node.RoleValidator)
	cfg.Home = t.TempDir()
	if cfg.Chain.P2PListen != "tcp://0.0.0.0:0" {
		t.Fatalf("default chain.p2p_listen %q, want port 0", cfg.Chain.P2PListen)
	}
	cfg.Chain.Enabled = true
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "chain.p2p_listen") {
		t.Fatalf("an enabled validator on port 0: %v", err)
	}
}

// TestInitChainFrom: init --chain-from asks a running validator node for
// its chain peer and libp2p addresses and refuses a genesis of another
// chain.
func TestInitChainFrom(t *testing.T) {
	n := startTxNet(t)
	home := filepath.Join(t.TempDir(), "prov")
	out, err := runCLI(t, "init", "--home", home, "--role", "provider", "--key-backend", "software",
		"--genesis", n.genesis, "--chain-from", n.api)
	if err != nil {
		t.Fatalf("init --chain-from: %v\n%s", err, out)
	}
	cfg, err := node.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	info := n.node.Info()
	want := info.ChainNodeID + "@" + strings.TrimPrefix(info.ChainP2PListen, "tcp://")
	if len(cfg.Chain.PersistentPeers) != 1 || cfg.Chain.PersistentPeers[0] != want {
		t.Errorf("persistent peers %v, want [%s]", cfg.Chain.PersistentPeers, want)
	}
	if len(cfg.P2P.Bootstrap) == 0 || !strings.HasSuffix(cfg.P2P.Bootstrap[0], "/p2p/"+info.PeerID) {
		t.Errorf("bootstrap %v, want the node's addresses (peer %s)", cfg.P2P.Bootstrap, info.PeerID)
	}
	if cfg.Network != "tx-test" {
		t.Errorf("network %q, want the chain's (tx-test)", cfg.Network)
	}
	for _, w := range []string{"tx register --api " + n.api + " --home " + home, "--amount 1000000000", "min_serving_bond"} {
		if !strings.Contains(out, w) {
			t.Errorf("init output lacks %q:\n%s", w, out)
		}
	}
	// The home is complete: it follows the chain as it stands, here on
	// CometBFT port 0 (what a config without p2p_listen gets).
	fhome := filepath.Join(t.TempDir(), "follower")
	if out, err := runCLI(t, "init", "--home", fhome, "--role", "provider", "--key-backend", "software",
		"--genesis", n.genesis, "--chain-from", n.api, "--chain-p2p-listen", "tcp://127.0.0.1:0"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	fcfg, err := node.Load(fhome)
	if err != nil {
		t.Fatal(err)
	}
	f := startInProcess(t, "follower", fcfg)
	target := n.node.Info().Height
	nodetest.Eventually(t, 30*time.Second, "the follower at the validator's height", func() bool { return f.Info().Height >= target })

	other := writeGenesis(t, t.TempDir(), "tenzro-other")
	_, err = runCLI(t, "init", "--home", t.TempDir(), "--role", "provider", "--key-backend", "software",
		"--genesis", other, "--chain-from", n.api)
	if err == nil || !strings.Contains(err.Error(), `runs chain "tenzro-tx-test"`) || !strings.Contains(err.Error(), `"tenzro-other"`) {
		t.Fatalf("a genesis of another chain: %v", err)
	}
}

// TestSourcePeers: what --chain-from makes of a node's info seen from
// here: a wildcard listener is reached at the API's host, loopback
// addresses only from the same machine, junk dropped.
func TestSourcePeers(t *testing.T) {
	id := strings.Repeat("cd", 20)
	peer := strings.Repeat("ef", 20) + "@127.0.0.1:3000"
	far := strings.Repeat("01", 20) + "@198.51.100.4:26656"
	info := node.NodeInfo{ChainNodeID: id, ChainP2PListen: "tcp://0.0.0.0:26656", ChainPeers: []string{peer, far, "junk", far}}
	got := sourcePeers(info, "203.0.113.7")
	if want := []string{id + "@203.0.113.7:26656", far}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("from afar: %v, want %v", got, want)
	}
	got = sourcePeers(info, "127.0.0.1")
	if want := []string{id + "@127.0.0.1:26656", peer, far}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("from the node's machine: %v, want %v", got, want)
	}
	info.ChainP2PListen = "tcp://0.0.0.0:0" // a follower on any port cannot be dialled
	if got := sourcePeers(info, "203.0.113.7"); fmt.Sprint(got) != fmt.Sprint([]string{far}) {
		t.Errorf("port 0: %v", got)
	}
	keyFile := filepath.Join(t.TempDir(), "p2p.key")
	if _, err := p2p.LoadOrCreateKey(keyFile); err != nil {
		t.Fatal(err)
	}
	id2, err := p2p.PeerIDFromKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := id2.String()
	addrs := []string{"/ip4/127.0.0.1/tcp/4001/p2p/" + pid, "/ip4/203.0.113.7/tcp/4001/p2p/" + pid, "/ip4/203.0.113.7/tcp/4002", "nonsense"}
	if got := sourceBootstrap(addrs, pid, "203.0.113.7"); len(got) != 1 || got[0] != addrs[1] {
		t.Errorf("bootstrap from afar: %v", got)
	}
	if got := sourceBootstrap(addrs, pid, "localhost"); len(got) != 2 {
		t.Errorf("bootstrap from the node's machine: %v", got)
	}
}

// FuzzSourcePeers: whatever a node answers, --chain-from keeps only valid
// peer addresses, and none on loopback for a remote node.
func FuzzSourcePeers(f *testing.F) {
	f.Add(`{"chain_node_id":"`+strings.Repeat("cd", 20)+`","chain_p2p_listen":"tcp://0.0.0.0:26656","chain_peers":["`+strings.Repeat("ef", 20)+`@127.0.0.1:1"]}`, "203.0.113.7")
	f.Add(`{"chain_node_id":"x","chain_p2p_listen":"tcp://[::]:1"}`, "::1")
	f.Fuzz(func(t *testing.T, raw, host string) {
		var info node.NodeInfo
		if json.Unmarshal([]byte(raw), &info) != nil {
			return
		}
		for _, p := range sourcePeers(info, host) {
			if err := checkChainPeer(p); err != nil {
				t.Fatalf("kept %q: %v", p, err)
			}
			_, addr, _ := strings.Cut(p, "@")
			if h, _, _ := net.SplitHostPort(addr); isLoopbackHost(h) && !isLoopbackHost(host) {
				t.Fatalf("kept loopback %q for remote host %q", p, host)
			}
		}
	})
}
