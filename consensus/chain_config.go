package consensus

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// Chain roles: a validator votes in consensus; a follower (providers,
// gateways) runs a full node that syncs and executes every block without
// voting, answers queries and relays transactions.
const (
	ChainValidator = "validator"
	ChainFollower  = "follower"
)

// ChainConfig is the [chain] section of a node's config file: the
// CometBFT node running the consensus application in-process beside the
// libp2p node. The node applies it over the chain home's own Config.
type ChainConfig struct {
	// Enabled runs the chain node; false lets a laptop gateway (join) run
	// without it, and the chain methods of the API then answer Unavailable.
	Enabled bool `toml:"enabled" comment:"The ledger: a CometBFT node running the consensus application in-process. false runs without it (a laptop gateway); the chain's API methods then answer \"unavailable\"."`
	// Role is validator or follower.
	Role string `toml:"role" comment:"validator (votes; its consensus key must be in the genesis) | follower (providers, gateways: a full node that syncs and executes every block, answers queries with proofs and relays transactions to the validators)"`
	// Home is CometBFT's home (config/ keys and genesis, data/ blocks and
	// state), relative to the node home.
	Home string `toml:"home" comment:"CometBFT home: config/ (node and consensus keys, genesis, config.toml) and data/ (blocks, application state)."`
	// P2PListen is CometBFT's p2p address, tcp://host:port.
	P2PListen string `toml:"p2p_listen" comment:"CometBFT peer-to-peer listen address."`
	// RPCListen is CometBFT's own RPC server, loopback only; "" runs none
	// (the node's JSON-RPC API serves the chain methods either way).
	RPCListen string `toml:"rpc_listen" comment:"CometBFT's own RPC server: loopback only, \"\" runs none (the chain methods of this node's /rpc work either way)."`
	// PersistentPeers are "nodeid@host:port" entries dialled at start.
	PersistentPeers []string `toml:"persistent_peers" comment:"Peers dialled at start and kept: \"<node id>@host:port\"."`
	// GenesisFile is the chain's genesis; "" = HOME/config/genesis.json
	// under the chain home.
	GenesisFile string `toml:"genesis_file" comment:"The chain's genesis file; \"\" = <home>/config/genesis.json."`
	// BlockTime is the pause after each block (timeout_commit); 0 keeps the
	// chain home's config.toml value, or 1s without one.
	BlockTime time.Duration `toml:"block_time" comment:"Pause after each block (timeout_commit); \"0s\" keeps the chain home's config.toml value (1s without one)."`
	// EmptyBlocksInterval is how long a validator proposing with no
	// transaction waits before it makes an empty block (CometBFT's
	// create_empty_blocks_interval); 0 keeps the chain home's config.toml
	// value.
	EmptyBlocksInterval time.Duration `toml:"empty_blocks_interval" comment:"With no transaction waiting, make a block only this often (CometBFT's create_empty_blocks_interval; a transaction is proposed at once): an idle chain then costs little CPU and disk. Chain time, and the windows counted in blocks (disputes, withdrawals), move on only with blocks. \"0s\" keeps the chain home's config.toml value (tenzrod genesis and the devnet write 5s; 0s there makes a block every block_time)."`
	// StateVersions is how many heights of application state are kept
	// (queries with proofs at older heights answer "no state"); 0 keeps
	// every version.
	StateVersions int64 `toml:"state_versions" comment:"Heights of application state kept for queries (older ones are pruned); 0 keeps every version."`
	// SnapshotInterval is how often (in heights) the state is snapshotted
	// for nodes that state-sync; 0 takes none. SnapshotKeep is how many of
	// the newest are kept.
	SnapshotInterval int64 `toml:"snapshot_interval" comment:"Take a state-sync snapshot every this many heights, for new nodes to join from; 0 takes none."`
	SnapshotKeep     int64 `toml:"snapshot_keep" comment:"Snapshots kept (the newest)."`
	// RetainBlocks is how many recent blocks CometBFT keeps; 0 keeps all.
	RetainBlocks int64 `toml:"retain_blocks" comment:"Blocks kept (older ones are pruned), never past the newest snapshot, and a validator keeps the genesis's evidence max age; 0 keeps every block."`
	// StallAfter is how long the height may stay put before the node
	// reports its chain stalled (/healthz 503, tenzro_nodeInfo, metrics);
	// 0 = ten blocks, at least 15s.
	StallAfter time.Duration `toml:"stall_after" comment:"How long the height may stay put before the node reports its chain stalled (/healthz 503, tenzro_nodeInfo, metrics); \"0s\" = ten blocks, at least 15s."`
	// StateSyncRPC are CometBFT RPC URLs of nodes of the chain; with two
	// or more, a node with no state restores the newest snapshot instead
	// of replaying the chain (StateSync). TrustHeight and TrustHash pin
	// the trusted block; unset, the RPC servers must agree on it.
	StateSyncRPC []string `toml:"state_sync_rpc" comment:"CometBFT RPC URLs (http://host:port) of at least two nodes of the chain: a node with no state yet restores the newest snapshot from its peers instead of replaying every block, verified by CometBFT's light client. Empty replays from genesis."`
	TrustHeight  int64    `toml:"trust_height" comment:"The block state sync trusts, with trust_hash; 0 takes the newest snapshot's block as every state_sync_rpc server names it (refused if they disagree)."`
	TrustHash    string   `toml:"trust_hash" comment:"The hash of the block at trust_height, hex."`
}

// DefaultChainConfig is the [chain] default for a node that is a chain
// validator or not: disabled until a genesis and peers are configured.
// Its p2p port is 0 (any free port), so two homes on one host never
// collide: a follower only dials out, and tenzrod init writes a free fixed
// port for a validator, whose address the other validators dial.
func DefaultChainConfig(validator bool) ChainConfig {
	r := ChainFollower
	if validator {
		r = ChainValidator
	}
	return ChainConfig{Role: r, Home: "chain", P2PListen: "tcp://0.0.0.0:0", PersistentPeers: []string{}, StateSyncRPC: []string{},
		StateVersions: DefaultStateVersions, SnapshotInterval: ledger.DefaultSnapshotInterval, SnapshotKeep: ledger.DefaultSnapshotKeep}
}

// DefaultEmptyBlocksInterval is the pause of an idle chain between
// blocks that tenzrod genesis and the devnet write into a validator's
// config.toml. A block costs every node CPU and disk however empty it is,
// so a chain with nothing to do makes one every 5 s instead of every
// block_time: about a tenth of the blocks of a 500 ms devnet. What waits
// on an idle chain is bounded by it. A block's time is CometBFT's BFT time,
// the median of the votes that committed the block before it, so the
// empty block that ends a pause carries the time the pause began: chain
// time trails the clock by up to two intervals. The mempool checks
// transactions at the last block's time, so a stream claim sees up to
// ~10 s less accrued and a session certificate's start lies up to ~10 s
// further ahead than it does (identity.ClockSkew allows 30 s); the
// watchdog's stall alarm scales with the interval (DefaultStallAfter).
// Settlement waits for nothing: a transaction is proposed at once, and
// the block after one that changed the state comes at once too, to prove
// it. Provider liveness is gossip, not blocks.
const DefaultEmptyBlocksInterval = 5 * time.Second

// MaxEmptyBlocksInterval bounds the pause: chain time, which trails the
// clock by up to two intervals when idle, must stay within
// identity.ClockSkew (30 s) of the clocks that sign receipts and session
// certificates, or the mempool refuses them as not yet valid.
const MaxEmptyBlocksInterval = 10 * time.Second

// DefaultStateVersions keeps about 8 minutes of 500 ms blocks, and an hour
// at the 1 s default: room for any query a client makes of recent state.
// Evidence packs need no old state (a record range proven at a recent
// height covers every record settled before it).
const DefaultStateVersions = 1000

// Validate checks the section for a node of nodeRole ("validator" may be
// a chain validator); a disabled chain is checked too, so a typo is found
// before the chain is switched on. Errors name the key.
func (c ChainConfig) Validate(nodeRole string) error {
	var errs []error
	switch c.Role {
	case ChainValidator:
		if nodeRole != ChainValidator {
			errs = append(errs, fmt.Errorf("chain.role: a %s node cannot be a chain validator (use follower)", nodeRole))
		}
	case ChainFollower:
	default:
		errs = append(errs, fmt.Errorf("chain.role: %q is not one of validator, follower", c.Role))
	}
	if c.Home == "" {
		errs = append(errs, errors.New("chain.home: not set"))
	}
	if err := checkTCP(c.P2PListen); err != nil {
		errs = append(errs, fmt.Errorf("chain.p2p_listen: %w", err))
	} else if c.Enabled && c.Role == ChainValidator && strings.HasSuffix(c.P2PListen, ":0") {
		errs = append(errs, fmt.Errorf("chain.p2p_listen: %q: a validator needs a fixed port the other validators dial (tenzrod init picks a free one)", c.P2PListen))
	}
	if c.RPCListen != "" {
		if err := checkTCP(c.RPCListen); err != nil {
			errs = append(errs, fmt.Errorf("chain.rpc_listen: %w", err))
		} else if host, _, _ := net.SplitHostPort(strings.TrimPrefix(c.RPCListen, "tcp://")); !isLoopback(host) {
			errs = append(errs, fmt.Errorf("chain.rpc_listen: %q must be a loopback address (CometBFT's RPC has no authentication)", c.RPCListen))
		}
	}
	for _, p := range c.PersistentPeers {
		id, addr, ok := strings.Cut(p, "@")
		if _, _, err := net.SplitHostPort(addr); !ok || len(id) != 40 || err != nil {
			errs = append(errs, fmt.Errorf("chain.persistent_peers: %q must be <40 hex node ID>@host:port", p))
		}
	}
	if c.StateVersions < 0 || c.StateVersions > 0 && c.StateVersions < 2 {
		errs = append(errs, fmt.Errorf("chain.state_versions: %d, want 0 (keep all) or at least 2", c.StateVersions))
	}
	if c.SnapshotInterval < 0 {
		errs = append(errs, fmt.Errorf("chain.snapshot_interval: %d is negative", c.SnapshotInterval))
	}
	if c.SnapshotKeep < 1 {
		errs = append(errs, fmt.Errorf("chain.snapshot_keep: %d, want at least 1", c.SnapshotKeep))
	}
	if c.RetainBlocks < 0 || c.RetainBlocks > 0 && c.RetainBlocks < 2 {
		errs = append(errs, fmt.Errorf("chain.retain_blocks: %d, want 0 (keep all) or at least 2", c.RetainBlocks))
	}
	if c.BlockTime < 0 || c.BlockTime > time.Minute {
		errs = append(errs, fmt.Errorf("chain.block_time: %s outside 0..1m", c.BlockTime))
	}
	if c.EmptyBlocksInterval < 0 || c.EmptyBlocksInterval > MaxEmptyBlocksInterval {
		errs = append(errs, fmt.Errorf("chain.empty_blocks_interval: %s outside 0..%s", c.EmptyBlocksInterval, MaxEmptyBlocksInterval))
	}
	if err := c.stateSync().validate(); err != nil {
		errs = append(errs, fmt.Errorf("chain.state_sync_rpc, trust_height, trust_hash: %w", err))
	}
	for _, u := range c.StateSyncRPC {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			errs = append(errs, fmt.Errorf("chain.state_sync_rpc: %q must be http://host:port", u))
		}
	}
	if c.StallAfter < 0 {
		errs = append(errs, fmt.Errorf("chain.stall_after: %s is negative", c.StallAfter))
	}
	return errors.Join(errs...)
}

// Apply lays the section over cc, the chain home's own configuration;
// path resolves the section's paths against the node's home.
func (c ChainConfig) Apply(cc Config, path func(string) string) Config {
	cc.P2PListen, cc.RPCListen, cc.Peers = c.P2PListen, c.RPCListen, c.PersistentPeers
	if c.GenesisFile != "" {
		cc.GenesisFile = path(c.GenesisFile)
	}
	if c.BlockTime > 0 {
		cc.BlockTime = c.BlockTime
	}
	if c.EmptyBlocksInterval > 0 {
		cc.EmptyBlocksInterval = c.EmptyBlocksInterval
	}
	cc.Follower = c.Role == ChainFollower
	cc.StateVersions, cc.StallAfter = c.StateVersions, c.StallAfter
	cc.SnapshotInterval, cc.SnapshotKeep, cc.RetainBlocks = c.SnapshotInterval, c.SnapshotKeep, c.RetainBlocks
	cc.StateSync = c.stateSync()
	return cc
}

// stateSync is the section's state sync, nil without RPC servers.
func (c ChainConfig) stateSync() *StateSync {
	if len(c.StateSyncRPC) == 0 && c.TrustHeight == 0 && c.TrustHash == "" {
		return nil
	}
	return &StateSync{RPCServers: c.StateSyncRPC, TrustHeight: c.TrustHeight, TrustHash: c.TrustHash}
}

func checkTCP(a string) error {
	rest, ok := strings.CutPrefix(a, "tcp://")
	if !ok {
		return fmt.Errorf("%q must be tcp://host:port", a)
	}
	if _, _, err := net.SplitHostPort(rest); err != nil {
		return fmt.Errorf("%q: %w", a, err)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
