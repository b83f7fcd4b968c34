package ledger

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/ethdb/pebble"
	"github.com/ethereum/go-ethereum/trie"
	"github.com/ethereum/go-ethereum/trie/trienode"
	"github.com/ethereum/go-ethereum/triedb"
)

// Keys of the store's own bookkeeping in the disk database, beside the trie
// nodes (which are keyed by their 32-byte hashes).
var (
	diskKeyHead   = []byte("tenzro-head")    // height (8) ‖ root (32) of the last commit
	diskKeyRootAt = []byte("tenzro-root-at") // ‖ height (8) → root (32)
)

// Store is the authenticated state: a Merkle-Patricia trie whose nodes
// live in a pebble database. Trie nodes of every committed root are kept,
// so past heights stay queryable with proofs.
type Store struct {
	disk   ethdb.Database
	tdb    *triedb.Database
	height int64
	root   common.Hash
}

// stateCacheMB is the state database's pebble cache. go-ethereum sizes
// four memtables from it (cache/8 each) and pebble preallocates every
// write-ahead log it keeps at 1.1 × a memtable: at 64 MB a devnet's eight
// nodes held over 300 MB of mostly empty logs after ten minutes. The
// state is small (accounts, escrows, providers, records); the trie keeps
// its own clean cache above this one.
const stateCacheMB = 16

// OpenStore opens (or creates) the state database in dir. dir == "" keeps
// everything in memory, for tests and benchmarks.
func OpenStore(dir string) (*Store, error) {
	var kv ethdb.KeyValueStore
	if dir == "" {
		kv = rawdb.NewMemoryDatabase()
	} else {
		db, err := pebble.New(filepath.Clean(dir), stateCacheMB, 64, "tenzro/", false)
		if err != nil {
			return nil, fmt.Errorf("ledger: open state db %s: %w", dir, err)
		}
		kv = db
	}
	disk := rawdb.NewDatabase(kv)
	s := &Store{disk: disk, tdb: triedb.NewDatabase(disk, triedb.HashDefaults), root: types.EmptyRootHash}
	head, err := disk.Get(diskKeyHead)
	switch {
	case err == nil && len(head) == 40:
		h, ok := heightOf(head[:8])
		if !ok {
			return nil, fmt.Errorf("ledger: state db head record names height %x, past the largest", head[:8])
		}
		s.height, s.root = h, common.BytesToHash(head[8:])
	case err == nil:
		return nil, fmt.Errorf("ledger: state db head record is %d bytes, want 40", len(head))
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.tdb.Close(); err != nil {
		return fmt.Errorf("ledger: close trie db: %w", err)
	}
	if err := s.disk.Close(); err != nil {
		return fmt.Errorf("ledger: close state db: %w", err)
	}
	return nil
}

// Height is the last committed height; Root its state root.
func (s *Store) Height() int64     { return s.height }
func (s *Store) Root() common.Hash { return s.root }

// RootAt returns the state root committed at height h.
func (s *Store) RootAt(h int64) (common.Hash, error) {
	if h == s.height {
		return s.root, nil
	}
	b, err := s.disk.Get(cat(string(diskKeyRootAt), u64(nonNeg(h))))
	if err != nil || len(b) != 32 {
		return common.Hash{}, fmt.Errorf("ledger: no state at height %d", h)
	}
	return common.BytesToHash(b), nil
}

// Open returns a trie view of the state at root; it sees committed and
// staged (Stage) roots alike.
func (s *Store) Open(root common.Hash) (*trie.Trie, error) {
	t, err := trie.New(trie.TrieID(root), s.tdb)
	if err != nil {
		return nil, fmt.Errorf("ledger: open trie at %x: %w", root, err)
	}
	return t, nil
}

// Stage hashes a modified trie opened at parent and keeps its new nodes in
// memory; the returned root can be opened at once and is written to disk by
// Commit. The trie must not be used afterwards.
func (s *Store) Stage(t *trie.Trie, parent common.Hash, height int64) (common.Hash, error) {
	root, nodes := t.Commit(false)
	if nodes == nil {
		return root, nil
	}
	if err := s.tdb.Update(root, parent, nonNeg(height), trienode.NewWithNodeSet(nodes), nil); err != nil {
		return common.Hash{}, fmt.Errorf("ledger: stage root %x: %w", root, err)
	}
	return root, nil
}

// Commit writes a staged root to disk and makes it the committed state of
// height. Trie nodes go first and the head record last, so a crash in
// between leaves the previous head intact.
func (s *Store) Commit(root common.Hash, height int64) error {
	if root != types.EmptyRootHash {
		if err := s.tdb.Commit(root, false); err != nil {
			return fmt.Errorf("ledger: write root %x: %w", root, err)
		}
	}
	return s.writeHead(root, height)
}

// writeHead records root as the state of height and makes it the head.
func (s *Store) writeHead(root common.Hash, height int64) error {
	b := s.disk.NewBatch()
	head := append(u64(nonNeg(height)), root[:]...)
	if err := errors.Join(
		b.Put(cat(string(diskKeyRootAt), u64(nonNeg(height))), root[:]),
		b.Put(diskKeyHead, head),
		b.Write(),
	); err != nil {
		return fmt.Errorf("ledger: write head %d: %w", height, err)
	}
	s.height, s.root = height, root
	return nil
}
