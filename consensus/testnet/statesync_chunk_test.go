package testnet_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

// TestJoinRefetchesAlteredChunk: the one peer a joining node first meets
// serves a snapshot chunk altered on its disk. The joiner refuses it (the
// chunk's hash is in the snapshot's metadata), refuses that peer, and
// restores the snapshot once a second peer that has it comes up, with
// the chain's app hash.
func TestJoinRefetchesAlteredChunk(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// Four validators, so the chain goes on while one is stopped; fifty
	// snapshots kept, so the one restored outlives the stopped
	// validator's catching up.
	net := testnet.StartT(ctx, t, t.TempDir(), testnet.Options{
		Validators: 4, BlockTime: 30 * time.Millisecond, SnapshotInterval: 20, SnapshotKeep: 50, RPC: true,
	})
	waitSnapshots(ctx, t, net, 20)
	// Validator 0 takes no more snapshots: its newest is the one the
	// joiner restores, and its chunk 0 is altered.
	l0 := net.Nodes[0].App().Ledger()
	if err := l0.SetSnapshots(1<<40, 50); err != nil {
		t.Fatal(err)
	}
	l0.WaitSnapshot()
	s0, _ := l0.NewestSnapshot()
	waitSnapshots(ctx, t, net, s0)
	chunk := filepath.Join(net.Configs[0].Home, "data", "tenzro-state-snapshots", strconv.FormatInt(s0, 10), "0")
	b, err := os.ReadFile(chunk)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(chunk, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// Validator 1, which has the snapshot intact, is down while the
	// joiner meets validator 0.
	if err := net.StopNode(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cfg, err := net.FollowerConfig(filepath.Join(t.TempDir(), "joiner"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Peers = cfg.Peers[:2]
	cfg.StateSync = &consensus.StateSync{RPCServers: net.RPCServers[2:]}
	joined, err := consensus.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := joined.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if err := joined.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for joined.SyncProgress(ctx).ChunksRefused == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("the altered chunk was not refused: %+v: %v", joined.SyncProgress(ctx), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := net.StartNode(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := testnet.WaitCaughtUp(ctx, joined, net.MaxHeight()); err != nil {
		t.Fatal(err)
	}
	p := joined.SyncProgress(ctx)
	if !p.Restored || p.SnapshotHeight != s0 || p.ChunksRefused < 1 {
		t.Fatalf("progress %+v: want the snapshot at %d restored after a refused chunk", p, s0)
	}
	sameAsValidators(ctx, t, net, joined, joined.App().Height())
}
