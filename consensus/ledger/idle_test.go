package ledger_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// stampAt is the height and block time l reports for its state at height
// (0 = the last commit).
func stampAt(t testing.TB, l *ledger.Ledger, height int64) ledger.Stamp {
	t.Helper()
	var at ledger.Stamp
	if err := l.ViewAt(height, func(_ *trie.Trie, s ledger.Stamp) error { at = s; return nil }); err != nil {
		t.Fatal(err)
	}
	return at
}

// TestIdleBlocksKeepTheAppHash: blocks with nothing to do leave the app
// hash as the last block that changed the state left it, while each
// height keeps its own block time beside the state; a snapshot taken
// while idle carries its block's time into the restored ledger.
func TestIdleBlocksKeepTheAppHash(t *testing.T) {
	c := newSnapChain(t, "", 2, 3, 2, 1024)
	genesisRoot := c.l.AppHash()
	if res := c.block(); !bytes.Equal(res.AppHash, genesisRoot) {
		t.Fatalf("empty block 1: app hash %x, want genesis's %x", res.AppHash, genesisRoot)
	}
	busy := c.mustApply(c.transfers(2)...)
	if bytes.Equal(busy.AppHash, genesisRoot) {
		t.Fatal("a block of transfers kept the genesis app hash")
	}
	for range 4 {
		if res := c.block(); !bytes.Equal(res.AppHash, busy.AppHash) {
			t.Fatalf("empty block %d: app hash %x, want %x", c.l.Height(), res.AppHash, busy.AppHash)
		}
		c.l.WaitSnapshot()
	}
	if h := c.l.Height(); h != 6 {
		t.Fatalf("height %d after 6 blocks", h)
	}
	for h := int64(1); h <= 6; h++ {
		want := ledger.Stamp{Height: h, Time: genesisTime.Unix() + h}
		if at := stampAt(t, c.l, h); at != want {
			t.Fatalf("stamp at %d: %+v, want %+v", h, at, want)
		}
	}
	ms := snapshots(t, c.l)
	if len(ms) != 2 || ms[0].Height != 6 || ms[0].Time != genesisTime.Unix()+6 || ms[1].Height != 3 {
		t.Fatalf("snapshots %+v, want at 6 (with its block time) and 3", ms)
	}
	dst := restoreInto(t, c.l, ms[1])
	if at, want := stampAt(t, dst, 0), (ledger.Stamp{Height: 3, Time: genesisTime.Unix() + 3}); at != want {
		t.Fatalf("restored stamp %+v, want %+v", at, want)
	}
	sameIdleBlock(t, c.chain, dst)
}

// sameIdleBlock commits an empty block 4 on restored (at height 3) and
// wants c's app hash of height 4 from it.
func sameIdleBlock(t *testing.T, c *chain, restored *ledger.Ledger) {
	t.Helper()
	want, err := c.l.AppHashAt(4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := restored.Finalize(4, genesisTime.Add(4*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := restored.Commit(); err != nil || !bytes.Equal(got.AppHash, want) {
		t.Fatalf("empty block 4 on the restored state: %x (%v), want %x", got.AppHash, err, want)
	}
}

// TestSnapshotTimeBeforeGenesisRefused: a snapshot whose block time is
// before the chain's genesis (the sender's word, not the light client's)
// is not adopted, whatever its chunks.
func TestSnapshotTimeBeforeGenesisRefused(t *testing.T) {
	c := newSnapChain(t, "", 2, 2, 1, 1024)
	c.grow(2, 2)
	m := snapshots(t, c.l)[0]
	m.Time = genesisTime.Unix() - 1
	dst, err := ledger.Open("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Close() })
	r, err := dst.BeginRestore(m)
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for i := range m.Chunks {
		b, err := c.l.SnapshotChunk(m.Height, uint32(i)) //nolint:gosec // a chunk index
		if err != nil {
			t.Fatal(err)
		}
		if _, last = r.Apply(i, b); last != nil {
			break
		}
	}
	if last == nil {
		t.Fatal("a snapshot timed before genesis was restored")
	}
	if h, _ := dst.Head(); h != 0 {
		t.Fatalf("refused snapshot left the ledger at height %d", h)
	}
}

// TestReopenKeepsTheBlockTime: a ledger reopened from disk after idle
// blocks is at its last block, with that block's time.
func TestReopenKeepsTheBlockTime(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Open(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_, g := ledgertest.NewDriver(t, genesisTime, ledgertest.Params(), 1)
	if _, _, err := l.InitChain(testChain, genesisTime, 1, g); err != nil {
		t.Fatal(err)
	}
	for h := int64(1); h <= 3; h++ {
		if _, err := l.Finalize(h, genesisTime.Add(time.Duration(h)*time.Minute), nil); err != nil {
			t.Fatal(err)
		}
		if err := l.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	hash := l.AppHash()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = ledger.Open(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	want := ledger.Stamp{Height: 3, Time: genesisTime.Add(3 * time.Minute).Unix()}
	if at := stampAt(t, l, 0); at != want || !bytes.Equal(l.AppHash(), hash) {
		t.Fatalf("reopened at %+v %x, want %+v %x", at, l.AppHash(), want, hash)
	}
	if at := stampAt(t, l, 2); at.Time != genesisTime.Add(2*time.Minute).Unix() {
		t.Fatalf("height 2's time after the reopen: %+v", at)
	}
}

// TestCheckTakesTheIdleBlockTime: the mempool checks a transaction at the
// last block's time even when that block changed nothing: a stream claim
// with nothing accrued at the open's block is refused, and admitted once
// an idle block ten seconds later has committed.
func TestCheckTakesTheIdleBlockTime(t *testing.T) {
	n := newStreamNet(t)
	c := n.c
	id := n.open(t, 3600, 50_000)
	claim := c.sign(n.op, &ledger.StreamClaim{ID: id})
	if err := c.l.Check(claim); ledger.CodeOf(err) != ledger.CodeOverdraft {
		t.Fatalf("claim checked at the open's block: %v, want nothing accrued", err)
	}
	before := c.l.AppHash()
	c.Now = c.Now.Add(9 * time.Second)
	if res := c.block(); !bytes.Equal(res.AppHash, before) {
		t.Fatal("an idle block changed the app hash")
	}
	if err := c.l.Check(claim); err != nil {
		t.Fatalf("claim checked ten seconds on: %v", err)
	}
}
