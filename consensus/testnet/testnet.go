package testnet

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/internal/freeport"
	"github.com/tenzrod/tenzrod/receipts/terms"

	"github.com/tenzrod/tenzrod/consensus"
)

// Options configure a network.
type Options struct {
	Validators  int                     // default 4
	ChainID     string                  // default "tenzro-testnet"
	GenesisTime time.Time               // default now
	BlockTime   time.Duration           // timeout_commit; default 150ms
	Params      *ledger.Params          // default consensus.DefaultParams()
	Accounts    []ledger.GenesisAccount // funded at genesis
	Stake       uint64                  // per validator; default 100 power
	Logger      *slog.Logger            // default: discard
	// EmptyBlocksInterval is the longest pause between blocks with no
	// transaction (CometBFT's create_empty_blocks_interval); 0 makes a
	// block every BlockTime.
	EmptyBlocksInterval time.Duration
	// WatchInterval and StallAfter set every node's watchdog
	// (consensus.Config); 0 keeps the defaults.
	WatchInterval, StallAfter time.Duration
	// SnapshotInterval, SnapshotKeep and RetainBlocks set every node's
	// state-sync snapshots and block retention (consensus.Config); 0 takes
	// no snapshots and keeps every block.
	SnapshotInterval, SnapshotKeep, RetainBlocks int64
	// RPC runs every validator's CometBFT RPC server on a loopback port
	// (Net.RPCServers), for nodes that join by state sync.
	RPC bool
}

// Net is a running network of validators.
type Net struct {
	ChainID     string
	GenesisFile string               // the network's genesis, for followers and auditors
	Operators   []ed25519.PrivateKey // validator operator account keys, by node index
	Configs     []consensus.Config
	Nodes       []*consensus.Node // nil while a node is stopped
	RPCServers  []string          // the validators' CometBFT RPC URLs, with Options.RPC
}

// Start creates the homes under dir, writes one genesis, starts every
// validator and waits until each has committed height 2 and left block
// sync. On error the nodes already started are stopped.
func Start(ctx context.Context, dir string, opt Options) (*Net, error) {
	if opt.Validators == 0 {
		opt.Validators = 4
	}
	if opt.ChainID == "" {
		opt.ChainID = "tenzro-testnet"
	}
	if opt.GenesisTime.IsZero() {
		opt.GenesisTime = time.Now()
	}
	if opt.BlockTime == 0 {
		opt.BlockTime = 150 * time.Millisecond
	}
	if opt.Params == nil {
		p := ledger.DefaultParams()
		opt.Params = &p
	}
	if opt.Stake == 0 {
		opt.Stake = 100 * ledger.PowerUnit
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	n := &Net{ChainID: opt.ChainID}
	spec := consensus.Devnet{Dir: dir, ChainID: opt.ChainID, GenesisTime: opt.GenesisTime, Params: *opt.Params,
		Funded: map[terms.AccountID]uint64{}, BlockTime: opt.BlockTime, EmptyBlocksInterval: opt.EmptyBlocksInterval}
	for _, a := range opt.Accounts {
		if _, dup := spec.Funded[a.Account]; dup {
			return nil, fmt.Errorf("testnet: account %s funded twice", a.Account)
		}
		spec.Funded[a.Account] = a.Balance
	}
	for i := range opt.Validators {
		_, op, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("testnet: operator key: %w", err)
		}
		n.Operators = append(n.Operators, op)
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		pub := op.Public().(ed25519.PublicKey) //nolint:forcetypeassert // ed25519's Public is documented to return this type
		v := consensus.DevnetValidator{
			Home: filepath.Join(dir, fmt.Sprintf("v%d", i)), P2PListen: fmt.Sprintf("tcp://127.0.0.1:%d", port),
			Operator: terms.AccountOf(pub), Stake: opt.Stake,
		}
		if opt.RPC {
			rpc, err := freePort()
			if err != nil {
				return nil, err
			}
			v.RPCListen = fmt.Sprintf("tcp://127.0.0.1:%d", rpc)
			n.RPCServers = append(n.RPCServers, fmt.Sprintf("http://127.0.0.1:%d", rpc))
		}
		spec.Validators = append(spec.Validators, v)
	}
	cfgs, err := consensus.DevnetGenesis(spec)
	if err != nil {
		return nil, err
	}
	for i := range cfgs {
		cfgs[i].Logger = opt.Logger
		cfgs[i].WatchInterval, cfgs[i].StallAfter = opt.WatchInterval, opt.StallAfter
		cfgs[i].SnapshotInterval, cfgs[i].SnapshotKeep, cfgs[i].RetainBlocks = opt.SnapshotInterval, opt.SnapshotKeep, opt.RetainBlocks
	}
	n.Configs, n.GenesisFile = cfgs, filepath.Join(dir, "genesis.json")
	n.Nodes = make([]*consensus.Node, opt.Validators)
	for i := range n.Nodes {
		if err := n.StartNode(ctx, i); err != nil {
			return nil, errors.Join(err, n.Stop(ctx))
		}
	}
	if err := n.WaitHeight(ctx, 2); err != nil {
		return nil, errors.Join(err, n.Stop(ctx))
	}
	if err := n.WaitSynced(ctx); err != nil {
		return nil, errors.Join(err, n.Stop(ctx))
	}
	return n, nil
}

// StartNode (re)starts node i from its home directory.
func (n *Net) StartNode(ctx context.Context, i int) error {
	if n.Nodes[i] != nil {
		return fmt.Errorf("testnet: node %d is running", i)
	}
	nd, err := consensus.New(n.Configs[i])
	if err != nil {
		return err
	}
	if err := nd.Start(ctx); err != nil {
		return errors.Join(err, nd.Stop(ctx))
	}
	n.Nodes[i] = nd
	return nil
}

// StopNode stops node i and closes its state.
func (n *Net) StopNode(ctx context.Context, i int) error {
	nd := n.Nodes[i]
	if nd == nil {
		return nil
	}
	n.Nodes[i] = nil
	return nd.Stop(ctx)
}

// Stop stops every running node.
func (n *Net) Stop(ctx context.Context) error {
	var errs []error
	for i := range n.Nodes {
		errs = append(errs, n.StopNode(ctx, i))
	}
	return errors.Join(errs...)
}

// Running returns the running nodes.
func (n *Net) Running() []*consensus.Node {
	var out []*consensus.Node
	for _, nd := range n.Nodes {
		if nd != nil {
			out = append(out, nd)
		}
	}
	return out
}

// WaitHeight waits until every running node has committed height h.
func (n *Net) WaitHeight(ctx context.Context, h int64) error {
	for _, nd := range n.Running() {
		for nd.App().Height() < h {
			select {
			case <-ctx.Done():
				return fmt.Errorf("testnet: %s stuck at height %d < %d: %w", nd.NodeID(), nd.App().Height(), h, ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return nil
}

// WaitSynced waits until no running node is block-syncing.
func (n *Net) WaitSynced(ctx context.Context) error {
	for _, nd := range n.Running() {
		for {
			busy, err := nd.CatchingUp(ctx)
			if err != nil {
				return err
			}
			if !busy {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("testnet: %s still catching up: %w", nd.NodeID(), ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// MaxHeight is the highest committed height among running nodes.
func (n *Net) MaxHeight() int64 {
	var h int64
	for _, nd := range n.Running() {
		h = max(h, nd.App().Height())
	}
	return h
}

func freePort() (int, error) {
	p, err := freeport.TCP()
	if err != nil {
		return 0, fmt.Errorf("testnet: %w", err)
	}
	return p, nil
}

// StartFollower creates a full node (Config.Follower: it executes blocks
// and answers queries without voting) in home that peers with every
// validator, starts it and waits until it has
// synced to the validators' height; the caller stops it.
func (n *Net) StartFollower(ctx context.Context, home string) (*consensus.Node, error) {
	return n.StartFollowerWith(ctx, home, nil)
}

// StartFollowerWith is StartFollower with edit applied to the follower's
// configuration before it is built (nil edits nothing): a state sync
// join, say.
func (n *Net) StartFollowerWith(ctx context.Context, home string, edit func(*consensus.Config)) (*consensus.Node, error) {
	cfg, err := n.FollowerConfig(home)
	if err != nil {
		return nil, err
	}
	if edit != nil {
		edit(&cfg)
	}
	nd, err := consensus.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := nd.Start(ctx); err != nil {
		return nil, errors.Join(err, nd.Stop(ctx))
	}
	if err := WaitCaughtUp(ctx, nd, n.MaxHeight()); err != nil {
		return nil, errors.Join(err, nd.Stop(ctx))
	}
	return nd, nil
}

// FollowerConfig is the configuration of a follower in home on a free
// port that peers with every validator, in the validators' order.
func (n *Net) FollowerConfig(home string) (consensus.Config, error) {
	port, err := freePort()
	if err != nil {
		return consensus.Config{}, err
	}
	var peers []string
	for _, c := range n.Configs {
		keys, err := consensus.InitHome(c.Home)
		if err != nil {
			return consensus.Config{}, err
		}
		peers = append(peers, keys.NodeID+"@"+strings.TrimPrefix(c.P2PListen, "tcp://"))
	}
	cfg := consensus.Config{Home: home, Moniker: "follower", P2PListen: fmt.Sprintf("tcp://127.0.0.1:%d", port),
		GenesisFile: n.GenesisFile, Peers: peers, Follower: true}
	c0 := n.Configs[0]
	cfg.BlockTime, cfg.Logger, cfg.WatchInterval, cfg.StallAfter = c0.BlockTime, c0.Logger, c0.WatchInterval, c0.StallAfter
	return cfg, nil
}

// WaitCaughtUp waits until nd has left block sync and committed height h.
func WaitCaughtUp(ctx context.Context, nd *consensus.Node, h int64) error {
	for {
		busy, err := nd.CatchingUp(ctx)
		if err != nil {
			return err
		}
		if !busy && nd.App().Height() >= h {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testnet: %s at height %d, catching up %v, want %d: %w", nd.NodeID(), nd.App().Height(), busy, h, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
