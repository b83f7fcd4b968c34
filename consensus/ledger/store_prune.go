package ledger

import (
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/trie"
)

// PruneStats is what one Prune did.
type PruneStats struct {
	KeptFrom     int64 // the oldest height whose state is still kept
	KeptNodes    int   // trie nodes reachable from the kept roots
	DeletedNodes int   // trie nodes no kept root reaches, deleted
	DeletedRoots int   // root records of heights before KeptFrom, deleted (their time records go with them)
}

// pruneWriteBatch bounds the deletes of one database write.
const pruneWriteBatch = 10_000

// Prune keeps the states of the last keep committed heights and deletes
// every trie node none of their roots reaches, with the root and time records of
// older heights: state then grows with the live data, not with every
// version. Queries at a pruned height answer "no state at height"; a
// record range proven at a kept height still covers every record settled
// before it, so evidence packs need no old state.
//
// It must run between commits (the Ledger calls it from Commit, under its
// lock): a node written while the live set is gathered could be deleted.
// A crash part way leaves unreachable nodes behind, which the next Prune
// deletes; it never deletes a reachable one. A kept root whose nodes are
// not all on disk stops it before anything is deleted. The pinned roots
// are kept too, whatever their height: a snapshot being taken reads one
// outside the Ledger's lock.
func (s *Store) Prune(keep int64, pinned ...common.Hash) (PruneStats, error) {
	var st PruneStats
	if keep < 1 {
		return st, fmt.Errorf("ledger: prune: keep %d versions, want at least 1", keep)
	}
	st.KeptFrom = max(1, s.height-keep+1)
	live := map[common.Hash]struct{}{}
	for h := st.KeptFrom; h <= s.height; h++ {
		root, err := s.RootAt(h)
		if err != nil {
			continue // a height before this store's first commit
		}
		if err := s.markLive(root, live); err != nil {
			return st, err
		}
	}
	for _, root := range pinned {
		if err := s.markLive(root, live); err != nil {
			return st, err
		}
	}
	st.KeptNodes = len(live)
	it := s.disk.NewIterator(nil, nil)
	defer it.Release()
	b := s.disk.NewBatch()
	flush := func() error {
		if b.ValueSize() == 0 {
			return nil
		}
		if err := b.Write(); err != nil {
			return fmt.Errorf("ledger: prune: %w", err)
		}
		b.Reset()
		return nil
	}
	pending := 0
	for it.Next() {
		k := it.Key()
		switch {
		case len(k) == common.HashLength:
			if _, ok := live[common.BytesToHash(k)]; ok {
				continue
			}
			st.DeletedNodes++
		case prunedHeight(k, diskKeyRootAt, st.KeptFrom):
			st.DeletedRoots++
		case prunedHeight(k, diskKeyTimeAt, st.KeptFrom):
		default:
			continue
		}
		if err := b.Delete(common.CopyBytes(k)); err != nil {
			return st, fmt.Errorf("ledger: prune: %w", err)
		}
		if pending++; pending >= pruneWriteBatch {
			if err := flush(); err != nil {
				return st, err
			}
			pending = 0
		}
	}
	if err := it.Error(); err != nil {
		return st, fmt.Errorf("ledger: prune: iterate: %w", err)
	}
	return st, flush()
}

// prunedHeight reports whether k is a per-height record under prefix of
// a height before keptFrom. A record under a height past the largest is
// none this store wrote: it is left alone.
func prunedHeight(k, prefix []byte, keptFrom int64) bool {
	if len(k) != len(prefix)+8 || string(k[:len(prefix)]) != string(prefix) {
		return false
	}
	h, ok := heightOf(k[len(prefix):])
	return ok && h < keptFrom
}

// markLive adds every node root reaches to live, skipping subtrees
// already there (consecutive versions share almost all of them).
func (s *Store) markLive(root common.Hash, live map[common.Hash]struct{}) error {
	if root == types.EmptyRootHash {
		return nil
	}
	if _, ok := live[root]; ok {
		return nil
	}
	t, err := trie.New(trie.TrieID(root), s.tdb)
	if err != nil {
		return fmt.Errorf("ledger: prune: open root %x: %w", root, err)
	}
	it, err := t.NodeIterator(nil)
	if err != nil {
		return fmt.Errorf("ledger: prune: iterate root %x: %w", root, err)
	}
	descend := true
	for it.Next(descend) {
		h := it.Hash()
		if h == (common.Hash{}) { // a node embedded in its parent
			descend = true
			continue
		}
		_, seen := live[h]
		live[h] = struct{}{}
		descend = !seen
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("ledger: prune: root %x: %w", root, err)
	}
	return nil
}
