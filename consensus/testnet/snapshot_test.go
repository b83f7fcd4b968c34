package testnet_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

// TestSnapshotsOnARunningChain: a validator running CometBFT in-process
// snapshots its state every 10 heights while blocks go on, keeps the two
// newest, and a fresh app restored from the newest through the ABCI
// state-sync calls has the chain's app hash at that height.
func TestSnapshotsOnARunningChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	net := testnet.StartT(ctx, t, t.TempDir(), testnet.Options{
		Validators: 1, BlockTime: 30 * time.Millisecond, SnapshotInterval: 10, SnapshotKeep: 2, RetainBlocks: 5,
	})
	app := net.Nodes[0].App()
	for {
		if newest, _ := app.Ledger().NewestSnapshot(); newest >= 30 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no snapshot at 30 by height %d: %v", app.Height(), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	list, err := app.ListSnapshots(ctx, &abci.ListSnapshotsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Snapshots) != 2 || list.Snapshots[0].Height < 30 || list.Snapshots[1].Height != list.Snapshots[0].Height-10 {
		t.Fatalf("snapshots %v, want the two newest, 10 apart, from 30", list.Snapshots)
	}
	s := list.Snapshots[0]
	want, err := app.AppHashAt(int64(s.Height)) //nolint:gosec // a listed height
	if err != nil {
		t.Fatal(err)
	}
	dst, err := consensus.NewApp("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if r, err := dst.OfferSnapshot(ctx, &abci.OfferSnapshotRequest{Snapshot: s, AppHash: want}); err != nil || r.Result != abci.OFFER_SNAPSHOT_RESULT_ACCEPT {
		t.Fatalf("offer: %v, %v", r.GetResult(), err)
	}
	for i := range s.Chunks {
		c, err := app.LoadSnapshotChunk(ctx, &abci.LoadSnapshotChunkRequest{Height: s.Height, Format: s.Format, Chunk: i})
		if err != nil {
			t.Fatal(err)
		}
		if r, err := dst.ApplySnapshotChunk(ctx, &abci.ApplySnapshotChunkRequest{Index: i, Chunk: c.Chunk}); err != nil || r.Result != abci.APPLY_SNAPSHOT_CHUNK_RESULT_ACCEPT {
			t.Fatalf("chunk %d: %v, %v", i, r.GetResult(), err)
		}
	}
	if h, got := dst.Height(), dst.AppHash(); uint64(h) != s.Height || !bytes.Equal(got, want) { //nolint:gosec // a restored height
		t.Fatalf("restored at %d %x, want %d %x", h, got, s.Height, want)
	}
}
