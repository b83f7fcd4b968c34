package ledger_test

import (
	"fmt"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// commitHeights commits heights from..to on st: each overwrites "counter"
// with its height and adds "acc/<height>".
func commitHeights(t *testing.T, st *ledger.Store, from, to int) map[int]common.Hash {
	t.Helper()
	roots := map[int]common.Hash{}
	for h := from; h <= to; h++ {
		tr, err := st.Open(st.Root())
		if err != nil {
			t.Fatal(err)
		}
		v := []byte(fmt.Sprint(h))
		if err := tr.Update([]byte("counter"), v); err != nil {
			t.Fatal(err)
		}
		if err := tr.Update([]byte(fmt.Sprintf("acc/%04d", h)), append(v, make([]byte, 40)...)); err != nil {
			t.Fatal(err)
		}
		root, err := st.Stage(tr, st.Root(), int64(h))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Commit(root, int64(h), int64(h)); err != nil {
			t.Fatal(err)
		}
		roots[h] = root
	}
	return roots
}

// readAt reads key at height h's root, by the root recorded for h.
func readAt(st *ledger.Store, root common.Hash, key string) ([]byte, error) {
	tr, err := st.Open(root)
	if err != nil {
		return nil, err
	}
	return tr.Get([]byte(key))
}

// TestStorePrune: pruning keeps exactly the last N versions, each whole
// (every key of each kept height reads as committed), deletes the nodes
// only older versions reached and their root and time records, survives a reopen,
// and the chain goes on committing on top of it.
func TestStorePrune(t *testing.T) {
	dir := t.TempDir()
	st, err := ledger.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	roots := commitHeights(t, st, 1, 60)
	const keep = 5
	ps, err := st.Prune(keep)
	if err != nil {
		t.Fatal(err)
	}
	if ps.KeptFrom != 56 || ps.DeletedRoots != 55 || ps.DeletedNodes == 0 || ps.KeptNodes == 0 {
		t.Fatalf("prune stats %+v, want kept from 56 with 55 root records and some nodes deleted", ps)
	}
	check := func(st *ledger.Store) {
		t.Helper()
		for h := 56; h <= 60; h++ {
			if r, err := st.RootAt(int64(h)); err != nil || r != roots[h] {
				t.Fatalf("root at %d: %x %v, want %x", h, r, err, roots[h])
			}
			if at, ok, err := st.TimeAt(int64(h)); err != nil || !ok || at != int64(h) {
				t.Fatalf("time at %d: %d %v %v, want %d", h, at, ok, err, h)
			}
			if v, err := readAt(st, roots[h], "counter"); err != nil || string(v) != fmt.Sprint(h) {
				t.Fatalf("counter at %d: %q %v", h, v, err)
			}
			for k := 1; k <= h; k++ {
				if v, err := readAt(st, roots[h], fmt.Sprintf("acc/%04d", k)); err != nil || len(v) == 0 {
					t.Fatalf("acc/%04d at height %d: %q %v", k, h, v, err)
				}
			}
		}
		for _, h := range []int{1, 30, 55} {
			if _, err := st.RootAt(int64(h)); err == nil {
				t.Errorf("root record of pruned height %d still there", h)
			}
			if _, ok, err := st.TimeAt(int64(h)); ok || err != nil {
				t.Errorf("time record of pruned height %d: %v %v, want none", h, ok, err)
			}
		}
	}
	check(st)
	again, err := st.Prune(keep)
	if err != nil || again.DeletedNodes != 0 || again.DeletedRoots != 0 || again.KeptNodes != ps.KeptNodes {
		t.Fatalf("second prune %+v %v, want nothing more to delete", again, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = ledger.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Height() != 60 || st.Root() != roots[60] {
		t.Fatalf("reopened at %d %x, want 60 %x", st.Height(), st.Root(), roots[60])
	}
	check(st)
	for h, r := range commitHeights(t, st, 61, 70) {
		roots[h] = r
	}
	if _, err := st.Prune(keep); err != nil {
		t.Fatal(err)
	}
	if v, err := readAt(st, roots[70], "acc/0001"); err != nil || len(v) == 0 {
		t.Fatalf("oldest account at the newest height after a second round: %q %v", v, err)
	}
}

// TestLedgerKeepsStateVersions: a ledger told to keep N versions prunes
// as it commits; its latest state is whole.
func TestLedgerKeepsStateVersions(t *testing.T) {
	c := newChain(t, t.TempDir(), genesisTime, ledgertest.Params(), 1)
	c.l.SetStateVersions(4)
	for range 12 {
		c.block()
	}
	h := c.l.Height()
	if _, err := c.l.AppHashAt(h - 3); err != nil {
		t.Fatalf("state of height %d (within the last 4): %v", h-3, err)
	}
	if _, err := c.l.AppHashAt(2); err == nil {
		t.Fatal("state of height 2 kept, want it pruned")
	}
}
