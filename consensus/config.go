package consensus

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	cmtcfg "github.com/cometbft/cometbft/config"
)

// Config configures one in-process CometBFT node running the App.
type Config struct {
	Home        string        // CometBFT home: config/ (keys, genesis) and data/ (blocks, app state)
	Moniker     string        // human-readable node name
	P2PListen   string        // e.g. "tcp://127.0.0.1:26656"
	RPCListen   string        // CometBFT RPC listen address; "" runs no RPC server
	Peers       []string      // persistent peers, "nodeid@host:port"
	GenesisFile string        // CometBFT genesis JSON; "" = Home/config/genesis.json
	BlockTime   time.Duration // timeout_commit: pause after each block; 0 = 1s
	// EmptyBlocksInterval is the longest gap between blocks when there are
	// no transactions; 0 makes a block every BlockTime.
	EmptyBlocksInterval time.Duration
	Logger              *slog.Logger // nil = slog.Default()
	// Follower makes a full node that follows the chain without voting,
	// for providers and gateways: New refuses to run it from a home whose
	// consensus key is in the genesis validator set.
	Follower bool
	// StateVersions is how many heights of application state are kept
	// (ledger.Ledger.SetStateVersions); 0 keeps every version.
	StateVersions int64
	// SnapshotInterval and SnapshotKeep set the ledger's state-sync
	// snapshots (ledger.Ledger.SetSnapshots; interval 0 takes none, keep 0
	// = ledger.DefaultSnapshotKeep); RetainBlocks the blocks CometBFT keeps
	// (App.SetRetain; 0 keeps all).
	SnapshotInterval int64
	SnapshotKeep     int64
	RetainBlocks     int64
	// WatchInterval is how often the watchdog checks the persistent peers
	// and the height (0 = 2s); StallAfter is how long the height may stay
	// put before the node reports its chain stalled (0 =
	// DefaultStallAfter of the block intervals).
	WatchInterval time.Duration
	StallAfter    time.Duration
	// StateSync, with RPC servers, makes a node that has no state yet
	// restore it from a peer's snapshot when the chain has one; nil
	// replays the chain from genesis.
	StateSync *StateSync

	// base is the CometBFT config.toml LoadConfig read; the fields above
	// are applied on top of it, every other setting is kept as written.
	base []byte
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Home == "" {
		return fmt.Errorf("consensus: config: home directory is required")
	}
	if !strings.HasPrefix(c.P2PListen, "tcp://") {
		return fmt.Errorf("consensus: config: p2p listen address %q must be tcp://host:port", c.P2PListen)
	}
	if c.RPCListen != "" && !strings.HasPrefix(c.RPCListen, "tcp://") && !strings.HasPrefix(c.RPCListen, "unix://") {
		return fmt.Errorf("consensus: config: rpc listen address %q must be tcp:// or unix://", c.RPCListen)
	}
	for _, p := range c.Peers {
		id, addr, ok := strings.Cut(p, "@")
		if !ok || len(id) != 40 || addr == "" {
			return fmt.Errorf("consensus: config: peer %q must be <40 hex node ID>@host:port", p)
		}
	}
	if c.SnapshotInterval < 0 || c.SnapshotKeep < 0 || c.RetainBlocks < 0 {
		return fmt.Errorf("consensus: config: negative snapshot interval, snapshot keep or retained blocks")
	}
	if err := c.StateSync.validate(); err != nil {
		return err
	}
	if c.BlockTime < 0 || c.WatchInterval < 0 || c.StallAfter < 0 {
		return fmt.Errorf("consensus: config: negative durations")
	}
	if c.EmptyBlocksInterval < 0 || c.EmptyBlocksInterval > MaxEmptyBlocksInterval {
		return fmt.Errorf("consensus: config: create_empty_blocks_interval %s outside 0..%s", c.EmptyBlocksInterval, MaxEmptyBlocksInterval)
	}
	return nil
}

// cometConfig builds CometBFT's configuration: from the config.toml
// LoadConfig read when there is one (only the fields Config carries are
// applied over it), else from CometBFT's defaults and settings for
// in-process networks.
func (c Config) cometConfig() (*cmtcfg.Config, error) {
	if c.base != nil {
		cfg, err := parseCometConfig(c.base, c.Home)
		if err != nil {
			return nil, err
		}
		cfg.Moniker = c.Moniker
		if c.GenesisFile != "" {
			cfg.Genesis = c.GenesisFile
		}
		cfg.P2P.ListenAddress = c.P2PListen
		cfg.P2P.PersistentPeers = strings.Join(c.Peers, ",")
		cfg.RPC.ListenAddress = c.RPCListen
		cfg.Consensus.TimeoutCommit = c.BlockTime
		cfg.Consensus.CreateEmptyBlocksInterval = c.EmptyBlocksInterval
		if c.EmptyBlocksInterval > 0 {
			// Without empty blocks at all, the windows counted in blocks
			// (disputes, withdrawals) would never close on an idle chain.
			cfg.Consensus.CreateEmptyBlocks = true
		}
		return cfg, nil
	}
	cfg := cmtcfg.DefaultConfig()
	cfg.SetRoot(c.Home)
	cfg.Moniker = c.Moniker
	if c.GenesisFile != "" {
		cfg.Genesis = c.GenesisFile // else CometBFT's default, config/genesis.json in Home
	}
	cfg.P2P.ListenAddress = c.P2PListen
	cfg.P2P.PersistentPeers = strings.Join(c.Peers, ",")
	cfg.P2P.AddrBookStrict = false
	cfg.P2P.AllowDuplicateIP = true
	cfg.P2P.PexReactor = false
	cfg.RPC.ListenAddress = c.RPCListen
	cfg.GRPC.ListenAddress = ""
	cfg.Instrumentation.Prometheus = false
	bt := c.BlockTime
	if bt == 0 {
		bt = time.Second
	}
	cfg.Consensus.TimeoutCommit = bt
	cfg.Consensus.CreateEmptyBlocks = true
	cfg.Consensus.CreateEmptyBlocksInterval = c.EmptyBlocksInterval
	if bt < time.Second {
		// Short blocks (devnets, tests): scale the round timeouts down too.
		cfg.Consensus.TimeoutPropose = 10 * bt
		cfg.Consensus.TimeoutProposeDelta = bt
		cfg.Consensus.TimeoutPrevote = 2 * bt
		cfg.Consensus.TimeoutPrevoteDelta = bt
		cfg.Consensus.TimeoutPrecommit = 2 * bt
		cfg.Consensus.TimeoutPrecommitDelta = bt
		cfg.Consensus.PeerGossipSleepDuration = 10 * time.Millisecond
	}
	cfg.Mempool.Recheck = true
	cfg.Mempool.Size = 20000
	return cfg, nil
}
