package ledger_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// snapChain is a chain of funded payers that snapshots its state.
type snapChain struct {
	*chain
	payers []*ledger.Signer
	sent   int
}

// newSnapChain opens a ledger in dir ("" = memory) with nPayers funded
// accounts, snapshotting every interval heights, keeping keep, in chunks
// of at most chunkMax bytes.
func newSnapChain(t testing.TB, dir string, nPayers int, interval, keep int64, chunkMax int) *snapChain {
	t.Helper()
	var payers []*ledger.Signer
	var accts []ledger.GenesisAccount
	for i := range nPayers {
		s, a := ledgertest.Signer(testChain, fmt.Sprint("payer", i), 1_000_000)
		payers, accts = append(payers, s), append(accts, a)
	}
	c := newChain(t, dir, genesisTime, ledgertest.Params(), 1, accts...)
	if err := c.l.SetSnapshots(interval, keep); err != nil {
		t.Fatal(err)
	}
	c.l.SetSnapshotChunkMax(chunkMax)
	return &snapChain{chain: c, payers: payers}
}

// transfers are perBlock transfers to accounts not seen before, from
// payers in turn: the state grows by perBlock accounts.
func (c *snapChain) transfers(perBlock int) [][]byte {
	txs := make([][]byte, 0, perBlock)
	for range perBlock {
		p := c.payers[c.sent%len(c.payers)]
		to := ledgertest.Account(ledgertest.SeedKey("fresh", c.sent))
		txs = append(txs, c.sign(p, &ledger.Transfer{To: to, Amount: 10}))
		c.sent++
	}
	return txs
}

// grow commits n blocks of perBlock transfers, each payer used at most
// once a block, waiting for any snapshot each starts.
func (c *snapChain) grow(n, perBlock int) {
	c.T.Helper()
	for range n {
		c.mustApply(c.transfers(min(perBlock, len(c.payers)))...)
		c.l.WaitSnapshot()
	}
}

// snapshots lists src's snapshots, failing the test on error.
func snapshots(t testing.TB, l *ledger.Ledger) []ledger.SnapshotMeta {
	t.Helper()
	ms, err := l.Snapshots()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// restoreInto restores snapshot m of src into a fresh in-memory ledger.
func restoreInto(t testing.TB, src *ledger.Ledger, m ledger.SnapshotMeta) *ledger.Ledger {
	t.Helper()
	dst, err := ledger.Open("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Close() })
	applySnapshot(t, src, dst, m)
	return dst
}

// applySnapshot restores snapshot m of src into dst, chunk by chunk.
func applySnapshot(t testing.TB, src, dst *ledger.Ledger, m ledger.SnapshotMeta) {
	t.Helper()
	r, err := dst.BeginRestore(m)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Chunks {
		b, err := src.SnapshotChunk(m.Height, uint32(i)) //nolint:gosec // a chunk index
		if err != nil {
			t.Fatal(err)
		}
		done, err := r.Apply(i, b)
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if done != (i == len(m.Chunks)-1) {
			t.Fatalf("chunk %d of %d: done = %v", i, len(m.Chunks), done)
		}
	}
}

// rawAt reads key from l's state at height (0 = the last commit).
func rawAt(t testing.TB, l *ledger.Ledger, height int64, key []byte) []byte {
	t.Helper()
	var v []byte
	if err := l.View(height, func(tr *trie.Trie, _ int64) error {
		var err error
		v, err = ledger.NewTrieKV(tr).Get(key)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}
