package testnet_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestJoinByStateSync: a node joining a 3-validator chain that has
// snapshots restores the newest one through CometBFT's state sync (trust
// agreed by the validators' RPC servers, app hash checked by the light
// client), never executes the blocks before it, then block-syncs, commits
// the validators' app hash and relays transactions.
func TestJoinByStateSync(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	buyer := seedKey("buyer")
	id := func(name string) terms.AccountID { return ledgertest.Account(seedKey(name)) }
	// Ten snapshots kept 20 blocks apart outlive state sync's 5 s of
	// discovery: CometBFT asks for the chunks of the snapshot it chose
	// until a peer has them, and the peers prune old ones.
	net := testnet.StartT(ctx, t, t.TempDir(), testnet.Options{
		Validators: 3, BlockTime: 30 * time.Millisecond, SnapshotInterval: 20, SnapshotKeep: 10, RPC: true,
		Accounts: []ledger.GenesisAccount{{Account: id("buyer"), Balance: 1_000_000}},
	})
	s := newSender(net)
	// State the snapshot must carry: transfers to new accounts and an escrow.
	submit(ctx, t, net.Nodes[0], s.Sign(t, buyer, &ledger.Transfer{To: id("bob"), Amount: 100}),
		s.Sign(t, buyer, &ledger.Transfer{To: id("carol"), Amount: 200}), s.Sign(t, buyer, &ledger.EscrowFund{Amount: 10_000}))
	waitSnapshots(ctx, t, net, 40)

	joined, err := net.StartFollowerWith(ctx, filepath.Join(t.TempDir(), "joiner"), func(c *consensus.Config) {
		c.StateSync = &consensus.StateSync{RPCServers: net.RPCServers}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := joined.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	p := joined.SyncProgress(ctx)
	if !p.StateSync || !p.Restored || p.SnapshotHeight < 40 || p.ChunksApplied != p.Chunks || p.TrustHeight < 40 {
		t.Fatalf("progress %+v: want a restored snapshot at 40 or later", p)
	}
	// The blocks before the snapshot were never fetched nor executed.
	one := int64(1)
	if b, err := joined.Client().Block(ctx, &one); err == nil && b.Block != nil {
		t.Fatalf("the joined node has block 1: it replayed instead of restoring")
	}
	// A transaction through the joined node commits, and every node
	// agrees on the app hash after it.
	res := submit(ctx, t, joined, s.Sign(t, buyer, &ledger.Transfer{To: id("dave"), Amount: 300}))
	sameAsValidators(ctx, t, net, joined, res[0].Height)
}

// sameAsValidators checks that joined commits height h with the app hash
// every validator committed there.
func sameAsValidators(ctx context.Context, t *testing.T, net *testnet.Net, joined *consensus.Node, h int64) {
	t.Helper()
	want, err := sameAppHash(ctx, net, h)
	if err != nil {
		t.Fatal(err)
	}
	for joined.App().Height() < h {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if got, err := joined.App().AppHashAt(h); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("joined app hash at %d = %x (%v), validators %x", h, got, err, want)
	}
}

// TestJoinRefusesDisagreeingPeers: RPC servers of two chains with the
// same chain ID name different blocks at the trust height; the join stops
// with ErrTrustDisagree before CometBFT starts.
func TestJoinRefusesDisagreeingPeers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opt := testnet.Options{Validators: 1, BlockTime: 30 * time.Millisecond, SnapshotInterval: 5, RPC: true}
	a := testnet.StartT(ctx, t, t.TempDir(), opt)
	b := testnet.StartT(ctx, t, t.TempDir(), opt)
	waitSnapshots(ctx, t, a, 5)
	waitSnapshots(ctx, t, b, 5)
	servers := []string{a.RPCServers[0], b.RPCServers[0]}
	if _, err := consensus.ResolveTrust(ctx, a.ChainID, servers); !errors.Is(err, consensus.ErrTrustDisagree) {
		t.Fatalf("resolve over two chains: %v, want ErrTrustDisagree", err)
	}
	_, err := a.StartFollowerWith(ctx, filepath.Join(t.TempDir(), "joiner"), func(c *consensus.Config) {
		c.StateSync = &consensus.StateSync{RPCServers: servers}
	})
	if !errors.Is(err, consensus.ErrTrustDisagree) {
		t.Fatalf("join over two chains: %v, want ErrTrustDisagree", err)
	}
	// The same two servers of one chain agree.
	root, err := consensus.ResolveTrust(ctx, a.ChainID, []string{a.RPCServers[0], a.RPCServers[0]})
	if err != nil || root.Height < 5 || root.Servers != 2 || len(root.Hash) != 64 {
		t.Fatalf("resolve over one chain: %+v, %v", root, err)
	}
}

// waitSnapshots waits until every validator offers a snapshot at height
// from or later.
func waitSnapshots(ctx context.Context, t *testing.T, net *testnet.Net, from int64) {
	t.Helper()
	for _, nd := range net.Running() {
		for {
			if h, _ := nd.App().Ledger().NewestSnapshot(); h >= from {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("no snapshot at %d by height %d: %v", from, nd.App().Height(), ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}
