package consensus_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// snapshotSource is a chain that snapshots every 3 heights, keeping 2,
// with a transfer to a new account in each of its 6 blocks.
func snapshotSource(t *testing.T) (*chain, []terms.AccountID) {
	t.Helper()
	alice, ga := ledgertest.Signer(testChain, "alice", 1_000_000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, ga)
	if err := c.app.Ledger().SetSnapshots(3, 2); err != nil {
		t.Fatal(err)
	}
	accts := []terms.AccountID{alice.Account()}
	for i := range 6 {
		to := ledgertest.Account(ledgertest.SeedKey("fresh", i))
		c.mustApply(c.sign(alice, &ledger.Transfer{To: to, Amount: 100}))
		c.app.Ledger().WaitSnapshot()
		accts = append(accts, to)
	}
	return c, accts
}

// TestAppStateSync: a fresh app refuses snapshots of an unknown format,
// with metadata that does not decode or disagrees with the snapshot, or
// of another app hash; it accepts the newest, asks for an altered chunk
// again and refuses its sender, and ends at the source's height and app
// hash with the same query answers.
func TestAppStateSync(t *testing.T) {
	ctx := context.Background()
	src, accts := snapshotSource(t)
	list, err := src.app.ListSnapshots(ctx, &abci.ListSnapshotsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Snapshots) != 2 || list.Snapshots[0].Height != 6 || list.Snapshots[1].Height != 3 {
		t.Fatalf("listed %v, want heights 6 and 3", list.Snapshots)
	}
	s, old := list.Snapshots[0], list.Snapshots[1]
	hash := src.app.AppHash()

	dst, err := consensus.NewApp("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if r, _ := dst.ApplySnapshotChunk(ctx, &abci.ApplySnapshotChunkRequest{Index: 0, Chunk: []byte{1}}); r.Result != abci.APPLY_SNAPSHOT_CHUNK_RESULT_ABORT {
		t.Fatalf("chunk without a snapshot: %v", r.Result)
	}
	with := func(f func(*abci.Snapshot)) *abci.Snapshot {
		c := *s
		c.Metadata = slices.Clone(s.Metadata)
		f(&c)
		return &c
	}
	for name, tc := range map[string]struct {
		snap *abci.Snapshot
		hash []byte
		want abci.OfferSnapshotResult
	}{
		"format":         {with(func(c *abci.Snapshot) { c.Format++ }), hash, abci.OFFER_SNAPSHOT_RESULT_REJECT_FORMAT},
		"metadata":       {with(func(c *abci.Snapshot) { c.Metadata = c.Metadata[:30] }), hash, abci.OFFER_SNAPSHOT_RESULT_REJECT},
		"height":         {with(func(c *abci.Snapshot) { c.Height = 9 }), hash, abci.OFFER_SNAPSHOT_RESULT_REJECT},
		"hash":           {with(func(c *abci.Snapshot) { c.Hash = old.Hash }), hash, abci.OFFER_SNAPSHOT_RESULT_REJECT},
		"other metadata": {with(func(c *abci.Snapshot) { c.Metadata = old.Metadata }), hash, abci.OFFER_SNAPSHOT_RESULT_REJECT},
		"app hash":       {s, old.Metadata[8:40], abci.OFFER_SNAPSHOT_RESULT_REJECT},
		"none":           {nil, hash, abci.OFFER_SNAPSHOT_RESULT_REJECT},
	} {
		r, err := dst.OfferSnapshot(ctx, &abci.OfferSnapshotRequest{Snapshot: tc.snap, AppHash: tc.hash})
		if err != nil || r.Result != tc.want {
			t.Errorf("%s: %v, %v; want %v", name, r.GetResult(), err, tc.want)
		}
	}
	if r, err := dst.OfferSnapshot(ctx, &abci.OfferSnapshotRequest{Snapshot: s, AppHash: hash}); err != nil || r.Result != abci.OFFER_SNAPSHOT_RESULT_ACCEPT {
		t.Fatalf("offer: %v, %v", r.GetResult(), err)
	}
	for i := range s.Chunks {
		c, err := src.app.LoadSnapshotChunk(ctx, &abci.LoadSnapshotChunkRequest{Height: s.Height, Format: s.Format, Chunk: i})
		if err != nil || len(c.Chunk) == 0 {
			t.Fatalf("load chunk %d: %d bytes, %v", i, len(c.GetChunk()), err)
		}
		bad := slices.Clone(c.Chunk)
		bad[0] ^= 0x40
		r, err := dst.ApplySnapshotChunk(ctx, &abci.ApplySnapshotChunkRequest{Index: i, Chunk: bad, Sender: "liar"})
		if err != nil || r.Result != abci.APPLY_SNAPSHOT_CHUNK_RESULT_RETRY ||
			!slices.Equal(r.RefetchChunks, []uint32{i}) || !slices.Equal(r.RejectSenders, []string{"liar"}) {
			t.Fatalf("altered chunk %d: %+v, %v", i, r, err)
		}
		r, err = dst.ApplySnapshotChunk(ctx, &abci.ApplySnapshotChunkRequest{Index: i, Chunk: c.Chunk, Sender: "honest"})
		if err != nil || r.Result != abci.APPLY_SNAPSHOT_CHUNK_RESULT_ACCEPT {
			t.Fatalf("chunk %d: %v, %v", i, r.GetResult(), err)
		}
	}
	info, err := dst.Info(ctx, &abci.InfoRequest{})
	if err != nil || info.LastBlockHeight != 6 || !bytes.Equal(info.LastBlockAppHash, hash) {
		t.Fatalf("restored app at %d %x (%v), want 6 %x", info.GetLastBlockHeight(), info.GetLastBlockAppHash(), err, hash)
	}
	restored := &chain{Driver: src.Driver, app: dst}
	for _, a := range accts {
		if got, want := restored.account(a), src.account(a); got != want {
			t.Fatalf("account %s: restored %+v, source %+v", a, got, want)
		}
	}
	if r, _ := dst.LoadSnapshotChunk(ctx, &abci.LoadSnapshotChunkRequest{Height: s.Height, Format: s.Format + 1}); len(r.Chunk) != 0 {
		t.Fatal("a chunk of an unknown format was served")
	}
	// No block before the snapshot's height was ever here: keeping the
	// last 2 asks nothing of CometBFT until the retain height passes 6.
	dst.SetRetain(2, 0)
	if got := commitRetains(t, restored, 2); !slices.Equal(got, []int64{0, 7}) {
		t.Fatalf("retain heights after the restore %v, want [0 7]", got)
	}
}

// TestAppRefusesForgedSnapshot: a snapshot whose chunks match its
// metadata but rebuild another root than the app hash it names is
// rejected after its last chunk, and the app stays empty.
func TestAppRefusesForgedSnapshot(t *testing.T) {
	ctx := context.Background()
	src, _ := snapshotSource(t)
	list, err := src.app.ListSnapshots(ctx, &abci.ListSnapshotsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ledger.DecodeSnapshotMeta(list.Snapshots[0].Metadata)
	if err != nil {
		t.Fatal(err)
	}
	m.AppHash[31] ^= 1
	forged := &abci.Snapshot{Height: 6, Format: ledger.SnapshotFormat, Chunks: uint32(len(m.Chunks)), Hash: m.Hash(), Metadata: m.Encode()}
	dst, err := consensus.NewApp("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if r, _ := dst.OfferSnapshot(ctx, &abci.OfferSnapshotRequest{Snapshot: forged, AppHash: m.AppHash[:]}); r.Result != abci.OFFER_SNAPSHOT_RESULT_ACCEPT {
		t.Fatalf("offer: %v", r.Result)
	}
	var last abci.ApplySnapshotChunkResult
	for i := range forged.Chunks {
		c, _ := src.app.LoadSnapshotChunk(ctx, &abci.LoadSnapshotChunkRequest{Height: 6, Format: ledger.SnapshotFormat, Chunk: i})
		r, err := dst.ApplySnapshotChunk(ctx, &abci.ApplySnapshotChunkRequest{Index: i, Chunk: c.Chunk})
		if err != nil {
			t.Fatal(err)
		}
		last = r.Result
	}
	if last != abci.APPLY_SNAPSHOT_CHUNK_RESULT_REJECT_SNAPSHOT {
		t.Fatalf("last chunk of a forged snapshot: %v", last)
	}
	if dst.Height() != 0 {
		t.Fatalf("a rejected snapshot left the app at height %d", dst.Height())
	}
}
