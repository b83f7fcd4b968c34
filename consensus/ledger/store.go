package ledger

import (
	"encoding/binary"
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
	// The block time of each committed height lives here, beside the
	// state and not in it: were it in the trie, every block would change
	// the app hash, and CometBFT makes a block at once after one that
	// changed it, so an idle chain would never idle.
	diskKeyTimeAt = []byte("tenzro-time-at") // ‖ height (8) → unix seconds (8)
)

// Store is the authenticated state: a Merkle-Patricia trie whose nodes
// live in a pebble database. Trie nodes of every committed root are kept,
// so past heights stay queryable with proofs.
type Store struct {
	disk   ethdb.Database
	tdb    *triedb.Database
	height int64
	root   common.Hash
	time   int64 // the block time of height; 0 when not recorded
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
		if s.time, _, err = s.timeRecord(h); err != nil {
			return nil, err
		}
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

// TimeAt returns the block time (unix seconds) committed with height h,
// and false when none was: a height pruned, never committed, or committed
// by a version that kept the time in the state.
func (s *Store) TimeAt(h int64) (int64, bool, error) {
	if h == s.height && s.time != 0 {
		return s.time, true, nil
	}
	return s.timeRecord(h)
}

func (s *Store) timeRecord(h int64) (int64, bool, error) {
	b, err := s.disk.Get(cat(string(diskKeyTimeAt), u64(nonNeg(h))))
	switch {
	case err != nil || len(b) == 0:
		return 0, false, nil
	case len(b) != 8:
		return 0, false, fmt.Errorf("ledger: state db time record of height %d is %d bytes, want 8", h, len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), true, nil //nolint:gosec // written from an int64 by writeHead
}

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
// height, whose block time is at (unix seconds). Trie nodes go first and
// the head record last, so a crash in between leaves the previous head
// intact. A root equal to the parent's (a block that changed nothing) has
// no nodes to write.
func (s *Store) Commit(root common.Hash, height, at int64) error {
	if root != types.EmptyRootHash {
		if err := s.tdb.Commit(root, false); err != nil {
			return fmt.Errorf("ledger: write root %x: %w", root, err)
		}
	}
	return s.writeHead(root, height, at)
}

// writeHead records root and the block time at as the state of height and
// makes it the head, in one write.
func (s *Store) writeHead(root common.Hash, height, at int64) error {
	b := s.disk.NewBatch()
	head := append(u64(nonNeg(height)), root[:]...)
	if err := errors.Join(
		b.Put(cat(string(diskKeyRootAt), u64(nonNeg(height))), root[:]),
		b.Put(cat(string(diskKeyTimeAt), u64(nonNeg(height))), u64(nonNeg(at))),
		b.Put(diskKeyHead, head),
		b.Write(),
	); err != nil {
		return fmt.Errorf("ledger: write head %d: %w", height, err)
	}
	s.height, s.root, s.time = height, root, at
	return nil
}
