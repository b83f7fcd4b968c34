package ledger_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// TestSnapshotRestoresTheState: snapshots are taken at every interval
// height, in several chunks; restoring the newest into an empty ledger
// gives the same height, app hash and answers, and the restored ledger
// then executes the next block to the same app hash as the source.
func TestSnapshotRestoresTheState(t *testing.T) {
	c := newSnapChain(t, "", 8, 5, 2, 1024)
	c.grow(10, 8)
	ms := snapshots(t, c.l)
	if got := []int64{ms[0].Height, ms[1].Height}; len(ms) != 2 || !slices.Equal(got, []int64{10, 5}) {
		t.Fatalf("snapshots at %v, want [10 5]", got)
	}
	m := ms[0]
	if len(m.Chunks) < 3 {
		t.Fatalf("%d chunks of ≤ 1024 bytes for %d pairs, want several", len(m.Chunks), m.Pairs)
	}
	c.grow(2, 8) // the source moves on; the snapshot stays of height 10
	dst := restoreInto(t, c.l, m)
	h, hash := dst.Head()
	want, err := c.l.AppHashAt(10)
	if err != nil {
		t.Fatal(err)
	}
	if h != 10 || !bytes.Equal(hash, want) || !bytes.Equal(hash, m.AppHash[:]) {
		t.Fatalf("restored head %d %x, want 10 %x", h, hash, want)
	}
	if dst.ChainID() != testChain {
		t.Fatalf("restored chain ID %q", dst.ChainID())
	}
	for i := range c.sent {
		key := ledger.KeyAccount(ledgertest.Account(ledgertest.SeedKey("fresh", i)))
		if got, want := rawAt(t, dst, 0, key), rawAt(t, c.l, 10, key); !bytes.Equal(got, want) {
			t.Fatalf("account %d: restored %x, source at 10 %x", i, got, want)
		}
	}

	// Both execute the same block 11 from height 10's state.
	again := newSnapChain(t, "", 8, 0, 1, 2048)
	again.grow(10, 8)
	if !bytes.Equal(again.l.AppHash(), want) {
		t.Fatal("the replayed chain differs at height 10")
	}
	sameNextBlock(t, again, dst)
}

// sameNextBlock executes c's next block of transfers on c and on
// restored, which is at c's height, and wants the same app hash from both
// and restored to commit it.
func sameNextBlock(t *testing.T, c *snapChain, restored *ledger.Ledger) {
	t.Helper()
	txs, at, h := c.transfers(8), c.Tick(), c.l.Height()+1
	want, err := c.l.Finalize(h, at, txs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := restored.Finalize(h, at, txs)
	if err != nil {
		t.Fatal(err)
	}
	if err := restored.Commit(); err != nil || !bytes.Equal(got.AppHash, want.AppHash) {
		t.Fatalf("block %d on the restored state: %x (%v), want %x", h, got.AppHash, err, want.AppHash)
	}
}

// TestSnapshotKeepsTheNewest: on disk, only the newest keep snapshots
// stay listed and their directories; older ones are deleted, and a
// reopened ledger lists the same.
func TestSnapshotKeepsTheNewest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	c := newSnapChain(t, dir, 4, 3, 2, 1<<20)
	c.grow(13, 4)
	var got []int64
	for _, m := range snapshots(t, c.l) {
		got = append(got, m.Height)
	}
	if !slices.Equal(got, []int64{12, 9}) {
		t.Fatalf("snapshots at %v, want [12 9]", got)
	}
	ents, err := os.ReadDir(dir + "-snapshots")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"12", "9"}) {
		t.Fatalf("snapshot directory holds %v, want [12 9]", names)
	}
	if newest, on := c.l.NewestSnapshot(); newest != 12 || !on {
		t.Fatalf("newest snapshot %d (on %v), want 12", newest, on)
	}
	b, err := c.l.SnapshotChunk(12, 0)
	if err != nil || len(b) == 0 {
		t.Fatalf("chunk 0 of 12: %d bytes, %v", len(b), err)
	}
	if _, err := c.l.SnapshotChunk(6, 0); err == nil {
		t.Fatal("a chunk of the pruned snapshot 6 was served")
	}
	restoreInto(t, c.l, snapshots(t, c.l)[1])
}

// TestSnapshotRestoreOnDisk: a state restored into a ledger on disk is
// there after a reopen, at the snapshot's height and app hash, and the
// chain commits on top of it.
func TestSnapshotRestoreOnDisk(t *testing.T) {
	c := newSnapChain(t, filepath.Join(t.TempDir(), "src"), 8, 3, 2, 4096)
	c.grow(6, 8)
	m := snapshots(t, c.l)[0]
	dir := filepath.Join(t.TempDir(), "dst")
	dst, err := ledger.Open(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	applySnapshot(t, c.l, dst, m)
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	dst, err = ledger.Open(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if h, hash := dst.Head(); h != 6 || !bytes.Equal(hash, c.l.AppHash()) {
		t.Fatalf("reopened restored state at %d %x, want 6 %x", h, hash, c.l.AppHash())
	}
	key := ledger.KeyAccount(ledgertest.Account(ledgertest.SeedKey("fresh", 0)))
	if got, want := rawAt(t, dst, 0, key), rawAt(t, c.l, 0, key); len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("account read back %x, want %x", got, want)
	}
	sameNextBlock(t, c, dst)
}

// TestSnapshotChunkAlteredIsRefused: a chunk that does not match its hash
// is refused as the chunk's fault (ErrSnapshotChunk) and the right one is
// then taken; a snapshot whose metadata names another app hash is refused
// after its last chunk and leaves the ledger empty; a ledger with state
// refuses to restore.
func TestSnapshotChunkAlteredIsRefused(t *testing.T) {
	c := newSnapChain(t, "", 8, 4, 1, 1024)
	c.grow(4, 8)
	m := snapshots(t, c.l)[0]
	dst, err := ledger.Open("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	r, err := dst.BeginRestore(m)
	if err != nil {
		t.Fatal(err)
	}
	chunk0, err := c.l.SnapshotChunk(m.Height, 0)
	if err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(chunk0)
	bad[len(bad)/2] ^= 1
	if _, err := r.Apply(0, bad); !errors.Is(err, ledger.ErrSnapshotChunk) {
		t.Fatalf("altered chunk: %v, want ErrSnapshotChunk", err)
	}
	if _, err := r.Apply(0, chunk0); err != nil {
		t.Fatalf("the right chunk after an altered one: %v", err)
	}

	forged := m
	forged.AppHash[0] ^= 1
	other, err := ledger.Open("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	r, err = other.BeginRestore(forged)
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for i := range m.Chunks {
		b, _ := c.l.SnapshotChunk(m.Height, uint32(i))
		if _, last = r.Apply(i, b); last != nil {
			break
		}
	}
	if last == nil || errors.Is(last, ledger.ErrSnapshotChunk) {
		t.Fatalf("snapshot of another app hash: %v, want the snapshot refused", last)
	}
	if h, _ := other.Head(); h != 0 {
		t.Fatalf("a refused snapshot left the ledger at height %d", h)
	}
	if _, err := c.l.BeginRestore(m); err == nil {
		t.Fatal("a ledger with state began a restore")
	}
}

// TestSnapshotWhileCommitting: blocks go on, pruning all but two
// heights of state, while snapshots are taken in the background; every
// snapshot listed restores to its app hash.
func TestSnapshotWhileCommitting(t *testing.T) {
	c := newSnapChain(t, "", 8, 5, 3, 1024)
	c.l.SetStateVersions(2)
	for range 30 {
		c.mustApply(c.transfers(8)...)
	}
	c.l.WaitSnapshot()
	ms := snapshots(t, c.l)
	if len(ms) == 0 || ms[0].Height < 5 {
		t.Fatalf("snapshots %v", ms)
	}
	for _, m := range ms {
		dst := restoreInto(t, c.l, m)
		if h, hash := dst.Head(); h != m.Height || !bytes.Equal(hash, m.AppHash[:]) {
			t.Fatalf("snapshot %d restored to %d %x", m.Height, h, hash)
		}
	}
}

// TestSnapshotMetaDecode refuses metadata that is short, of height 0,
// names no chunk or holds the wrong number of hashes, and round-trips a
// good one.
func TestSnapshotMetaDecode(t *testing.T) {
	good := ledger.SnapshotMeta{Height: 7, Pairs: 3, Chunks: make([][32]byte, 2)}
	good.AppHash[0], good.Chunks[1][5] = 1, 2
	enc := good.Encode()
	if m, err := ledger.DecodeSnapshotMeta(enc); err != nil || !bytes.Equal(m.Encode(), enc) || m.Height != 7 {
		t.Fatalf("good metadata: %+v, %v", m, err)
	}
	noChunks := good
	noChunks.Chunks = nil
	zero := good
	zero.Height = 0
	for name, b := range map[string][]byte{
		"empty":        nil,
		"short":        enc[:20],
		"height 0":     zero.Encode(),
		"no chunks":    noChunks.Encode(),
		"hash missing": enc[:len(enc)-1],
		"extra byte":   append(slices.Clone(enc), 0),
	} {
		if _, err := ledger.DecodeSnapshotMeta(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	for name, b := range map[string][]byte{
		"empty key":      {0, 1, 'v'},
		"empty value":    {1, 'k', 0},
		"past the end":   {5, 'k'},
		"bad varint":     {0xff},
		"value past end": {1, 'k', 9, 'v'},
	} {
		if err := ledger.DecodeSnapshotChunk(b, func(_, _ []byte) error { return nil }); err == nil {
			t.Errorf("chunk %s: decoded", name)
		}
	}
}

// TestPrunePinnedRoot: a root pinned while a snapshot reads it survives a
// prune that keeps only newer heights.
func TestPrunePinnedRoot(t *testing.T) {
	st, err := ledger.OpenStore("")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	roots := commitHeights(t, st, 1, 10)
	if _, err := st.Prune(2, roots[3]); err != nil {
		t.Fatal(err)
	}
	if v, err := readAt(st, roots[3], "counter"); err != nil || string(v) != strconv.Itoa(3) {
		t.Fatalf("pinned height 3 reads %q, %v", v, err)
	}
	if _, err := readAt(st, roots[4], "acc/0004"); err == nil {
		t.Fatal("unpinned height 4 survived the prune")
	}
}
