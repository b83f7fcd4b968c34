package consensus

import (
	"strings"
	"testing"
	"time"
)

// TestChainConfigValidate: each bad [chain] value is refused naming its
// key (moved from node's TestChainConfigValidate with the section).
func TestChainConfigValidate(t *testing.T) {
	good := DefaultChainConfig(false)
	if err := good.Validate("provider"); err != nil {
		t.Fatalf("default chain section: %v", err)
	}
	if err := DefaultChainConfig(true).Validate("validator"); err != nil {
		t.Fatalf("default validator chain section: %v", err)
	}
	for _, c := range []struct {
		name, key string
		mod       func(*ChainConfig)
	}{
		{"provider as chain validator", "chain.role", func(c *ChainConfig) { c.Role = ChainValidator }},
		{"unknown role", "chain.role", func(c *ChainConfig) { c.Role = "observer" }},
		{"public rpc", "chain.rpc_listen", func(c *ChainConfig) { c.RPCListen = "tcp://0.0.0.0:26657" }},
		{"p2p without scheme", "chain.p2p_listen", func(c *ChainConfig) { c.P2PListen = "127.0.0.1:26656" }},
		{"bad peer", "chain.persistent_peers", func(c *ChainConfig) { c.PersistentPeers = []string{"abc@127.0.0.1:1"} }},
		{"no home", "chain.home", func(c *ChainConfig) { c.Home = "" }},
		{"negative stall", "chain.stall_after", func(c *ChainConfig) { c.StallAfter = -time.Second }},
		{"slow blocks", "chain.block_time", func(c *ChainConfig) { c.BlockTime = time.Hour }},
		{"negative idle interval", "chain.empty_blocks_interval", func(c *ChainConfig) { c.EmptyBlocksInterval = -time.Second }},
		{"idle past the clock skew", "chain.empty_blocks_interval", func(c *ChainConfig) { c.EmptyBlocksInterval = time.Minute }},
		{"one state version", "chain.state_versions", func(c *ChainConfig) { c.StateVersions = 1 }},
		{"negative snapshot interval", "chain.snapshot_interval", func(c *ChainConfig) { c.SnapshotInterval = -1 }},
		{"no snapshot kept", "chain.snapshot_keep", func(c *ChainConfig) { c.SnapshotKeep = 0 }},
		{"one block retained", "chain.retain_blocks", func(c *ChainConfig) { c.RetainBlocks = 1 }},
		{"negative retained blocks", "chain.retain_blocks", func(c *ChainConfig) { c.RetainBlocks = -5 }},
		{"one state sync server", "chain.state_sync_rpc, trust_height, trust_hash", func(c *ChainConfig) { c.StateSyncRPC = []string{rpcA} }},
		{"trust without servers", "chain.state_sync_rpc, trust_height, trust_hash", func(c *ChainConfig) { c.TrustHeight, c.TrustHash = 5, hash32 }},
		{"trust height without hash", "chain.state_sync_rpc, trust_height, trust_hash", func(c *ChainConfig) { c.StateSyncRPC, c.TrustHeight = []string{rpcA, rpcB}, 5 }},
		{"short trust hash", "chain.state_sync_rpc, trust_height, trust_hash", func(c *ChainConfig) { c.StateSyncRPC, c.TrustHeight, c.TrustHash = []string{rpcA, rpcB}, 5, "abcd" }},
		{"state sync server without scheme", "chain.state_sync_rpc", func(c *ChainConfig) { c.StateSyncRPC = []string{rpcA, "127.0.0.1:2"} }},
	} {
		bad := good
		bad.PersistentPeers = append([]string(nil), good.PersistentPeers...)
		c.mod(&bad)
		if err := bad.Validate("provider"); err == nil || !strings.Contains(err.Error(), c.key+":") {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.key)
		}
	}
	v := DefaultChainConfig(true)
	v.Enabled = true
	if err := v.Validate("validator"); err == nil || !strings.Contains(err.Error(), "chain.p2p_listen:") {
		t.Errorf("enabled validator on port 0: %v, want chain.p2p_listen named", err)
	}
}

// TestChainConfigApply: the section's addresses, peers and genesis lie
// over the chain home's own configuration; a zero block time or empty
// blocks interval keeps its, a set one replaces it.
func TestChainConfigApply(t *testing.T) {
	c := DefaultChainConfig(false)
	c.GenesisFile, c.PersistentPeers = "g.json", []string{strings.Repeat("a", 40) + "@127.0.0.1:1"}
	got := c.Apply(Config{BlockTime: 3 * time.Second, EmptyBlocksInterval: 4 * time.Second}, func(p string) string { return "/home/" + p })
	if got.GenesisFile != "/home/g.json" || got.BlockTime != 3*time.Second || got.EmptyBlocksInterval != 4*time.Second ||
		!got.Follower || len(got.Peers) != 1 || got.P2PListen != c.P2PListen {
		t.Fatalf("applied: %+v", got)
	}
	c.EmptyBlocksInterval = 7 * time.Second
	if got := c.Apply(Config{EmptyBlocksInterval: 4 * time.Second}, func(p string) string { return p }); got.EmptyBlocksInterval != 7*time.Second {
		t.Fatalf("empty blocks interval applied as %s, want the section's 7s", got.EmptyBlocksInterval)
	}
	if got.StateSync != nil {
		t.Fatalf("state sync %+v without RPC servers", got.StateSync)
	}
	c.RetainBlocks = 500
	c.StateSyncRPC, c.TrustHeight, c.TrustHash = []string{rpcA, rpcB}, 7, hash32
	if err := c.Validate("provider"); err != nil {
		t.Fatalf("state sync section: %v", err)
	}
	got = c.Apply(Config{}, func(p string) string { return p })
	if got.SnapshotInterval != 1000 || got.SnapshotKeep != 2 || got.RetainBlocks != 500 {
		t.Fatalf("snapshot and retention settings applied as %d, %d, %d", got.SnapshotInterval, got.SnapshotKeep, got.RetainBlocks)
	}
	if ss := got.StateSync; ss == nil || len(ss.RPCServers) != 2 || ss.TrustHeight != 7 || ss.TrustHash != hash32 {
		t.Fatalf("state sync applied as %+v", ss)
	}
}

const (
	rpcA, rpcB = "http://127.0.0.1:26657", "http://127.0.0.1:26658"
	hash32     = "9039A0CB7B8DA3ED3CD9DC23CA0E6DE45070481FE8071085DF1C3D9F3469B446"
)
