package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/trie"
)

// ErrSnapshotChunk is a chunk whose SHA-256 is not the one its snapshot's
// metadata names: the sender's fault, not the snapshot's, so the chunk is
// worth fetching again from another peer.
var ErrSnapshotChunk = errors.New("ledger: snapshot chunk does not match its hash")

// Restore rebuilds the state from a snapshot's chunks, applied in order
// into an empty ledger. Trie nodes are written as the pairs arrive; the
// head is written only after the last chunk, when the rebuilt root equals
// the snapshot's app hash, so a snapshot given up half way leaves the
// ledger empty (its nodes unreachable, for Prune to delete).
type Restore struct {
	l     *Ledger
	meta  SnapshotMeta
	next  int
	st    *trie.StackTrie
	batch ethdb.Batch
	last  []byte
	pairs uint64
	err   error // the first node write that failed
}

// BeginRestore starts restoring the snapshot m; the ledger must hold no
// state yet.
func (l *Ledger) BeginRestore(m SnapshotMeta) (*Restore, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.store.Height() != 0 || l.store.Root() != types.EmptyRootHash {
		return nil, fmt.Errorf("ledger: restore: the state is already at height %d", l.store.Height())
	}
	if len(m.Chunks) == 0 {
		return nil, errors.New("ledger: restore: snapshot has no chunks")
	}
	r := &Restore{l: l, meta: m, batch: l.store.disk.NewBatch()}
	r.st = trie.NewStackTrie(r.writeNode)
	return r, nil
}

// writeNode stores one node of the rebuilt trie under its hash, as the
// hash-keyed store Stage and Commit write does.
func (r *Restore) writeNode(_ []byte, h common.Hash, blob []byte) {
	if r.err != nil {
		return
	}
	r.err = r.batch.Put(h.Bytes(), common.CopyBytes(blob))
	if r.err == nil && r.batch.ValueSize() >= ethdb.IdealBatchSize {
		r.err = r.batch.Write()
		r.batch.Reset()
	}
}

// Apply applies chunk i. It returns done after the last chunk, with the
// ledger then at the snapshot's height. An error wrapping
// ErrSnapshotChunk rejects the chunk only; any other rejects the snapshot.
func (r *Restore) Apply(i int, chunk []byte) (done bool, err error) {
	if i != r.next {
		return false, fmt.Errorf("ledger: restore: chunk %d applied, want chunk %d", i, r.next)
	}
	if sha256.Sum256(chunk) != r.meta.Chunks[i] {
		return false, fmt.Errorf("%w: chunk %d of snapshot %d", ErrSnapshotChunk, i, r.meta.Height)
	}
	err = DecodeSnapshotChunk(chunk, func(k, v []byte) error {
		if r.last != nil && bytes.Compare(k, r.last) <= 0 {
			return fmt.Errorf("ledger: restore: chunk %d: key %x not after %x", i, k, r.last)
		}
		r.last = append(r.last[:0], k...)
		r.pairs++
		if err := r.st.Update(k, v); err != nil {
			return fmt.Errorf("ledger: restore: chunk %d: %w", i, err)
		}
		return r.err
	})
	if err != nil {
		return false, err
	}
	if r.next++; r.next < len(r.meta.Chunks) {
		return false, nil
	}
	return true, r.finish()
}

func (r *Restore) finish() error {
	if r.pairs != r.meta.Pairs {
		return fmt.Errorf("ledger: restore: %d pairs, the snapshot names %d", r.pairs, r.meta.Pairs)
	}
	root := r.st.Hash()
	if r.err == nil {
		r.err = r.batch.Write()
	}
	if r.err != nil {
		return fmt.Errorf("ledger: restore: write nodes: %w", r.err)
	}
	if root != r.meta.AppHash {
		return fmt.Errorf("ledger: restore: rebuilt root %x, the snapshot's app hash is %x", root, r.meta.AppHash)
	}
	l := r.l
	l.mu.Lock()
	defer l.mu.Unlock()
	t, err := l.store.Open(root)
	if err != nil {
		return err
	}
	var meta ChainMeta
	ok, err := Load(NewTrieKV(t), keyMeta, &meta)
	switch {
	case err != nil:
		return fmt.Errorf("ledger: restore: chain metadata: %w", err)
	case !ok:
		return errors.New("ledger: restore: no chain metadata in the snapshot")
	}
	// The app hash no longer names its height (an idle chain keeps one
	// root for many); CometBFT's light client bound it to this height.
	if r.meta.Time < meta.GenesisTime {
		return fmt.Errorf("ledger: restore: the snapshot's block time %d is before the genesis's %d", r.meta.Time, meta.GenesisTime)
	}
	if err := l.store.writeHead(root, r.meta.Height, r.meta.Time); err != nil {
		return err
	}
	meta.Height, meta.Time = r.meta.Height, r.meta.Time
	l.meta = meta
	l.resetCheck()
	l.log.Info("ledger: state restored from snapshot", "height", r.meta.Height, "root", root, "pairs", r.pairs)
	return nil
}
