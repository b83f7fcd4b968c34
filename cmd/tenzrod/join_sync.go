package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tenzrod/tenzrod/consensus"
)

// syncFlags are how a new chain follower gets its state: by CometBFT
// state sync from the newest snapshot, through the chain's RPC servers.
type syncFlags struct {
	rpc         []string
	trustHeight int64
	trustHash   string
}

func (f *syncFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.rpc, "chain-rpc", nil, "CometBFT RPC URL of a node of the chain, http://host:port (repeatable; with two or more this node restores the newest snapshot instead of replaying every block, the trusted block agreed by all of them)")
	fs.Int64Var(&f.trustHeight, "trust-height", 0, "the block state sync trusts, with --trust-hash (default: the newest snapshot's block, as every --chain-rpc names it)")
	fs.StringVar(&f.trustHash, "trust-hash", "", "the hex hash of the block at --trust-height, from a source you trust")
}

// trustCheckTimeout bounds asking the --chain-rpc servers at setup.
const trustCheckTimeout = 15 * time.Second

// apply checks the flags, asks the servers for the trusted block unless
// it is given (so a disagreement refuses the setup before anything is
// written) and sets the chain section to state-sync through them.
func (f syncFlags) apply(out io.Writer, cc *consensus.ChainConfig, chainID string) error {
	if len(f.rpc) == 0 {
		if f.trustHeight != 0 || f.trustHash != "" {
			return errors.New("--trust-height and --trust-hash need --chain-rpc (at least two): the servers the light client verifies the snapshot through")
		}
		return nil
	}
	if len(f.rpc) < 2 {
		return errors.New("--chain-rpc: give at least two CometBFT RPC URLs: the trusted block must be agreed by two nodes, and CometBFT's light client checks one against another")
	}
	for _, u := range f.rpc {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("--chain-rpc %q: want http://host:port", u)
		}
	}
	if (f.trustHeight > 0) != (f.trustHash != "") || f.trustHeight < 0 {
		return errors.New("--trust-height and --trust-hash go together: a positive height and the hex hash of its block")
	}
	if f.trustHeight > 0 {
		cc.StateSyncRPC, cc.TrustHeight, cc.TrustHash = f.rpc, f.trustHeight, strings.ToUpper(f.trustHash)
		fmt.Fprintf(out, "state sync   trusting block %d %s (--trust-height, --trust-hash)\n", f.trustHeight, cc.TrustHash)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), trustCheckTimeout)
	defer cancel()
	root, err := consensus.ResolveTrust(ctx, chainID, f.rpc)
	if err != nil {
		return fmt.Errorf("--chain-rpc: %w", err)
	}
	// The trusted block itself is not kept: it is agreed again at the
	// first start, when the snapshots are newer.
	cc.StateSyncRPC = f.rpc
	if root.Snapshot == 0 {
		fmt.Fprintf(out, "state sync   the chain (height %d) offers no snapshot yet: the first start replays it\n", root.Latest)
		return nil
	}
	fmt.Fprintf(out, "state sync   snapshot at block %d of %d; trusted block %d %s, agreed by %d nodes (checked again at the first start)\n",
		root.Snapshot, root.Latest, root.Height, root.Hash, root.Servers)
	return nil
}

// progressEvery is how often a joining node prints its sync progress.
const progressEvery = 2 * time.Second

// joinStall is how long the join may make no progress (no chunk, no
// block) before it gives up.
const joinStall = 2 * time.Minute

// waitSynced waits until ready() holds, printing the chain node's sync
// progress to out whenever it changes; it fails once progress stalls
// for joinStall.
func waitSynced(ctx context.Context, out io.Writer, chain *consensus.Node, ready func(context.Context) bool) error {
	var last string
	lastMove := time.Now()
	var mark [2]int64
	for !ready(ctx) {
		p := chain.SyncProgress(ctx)
		if now := [2]int64{p.Height, int64(p.ChunksApplied)}; now != mark {
			mark, lastMove = now, time.Now()
		}
		if s := p.String(); s != last {
			fmt.Fprintf(out, "syncing      %s\n", s)
			last = s
		}
		if time.Since(lastMove) > joinStall {
			return fmt.Errorf("join: the chain made no progress for %s (%s): check --chain-peer and --chain-rpc", joinStall, p)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("join: %w", ctx.Err())
		case <-time.After(progressEvery):
		}
	}
	return nil
}
