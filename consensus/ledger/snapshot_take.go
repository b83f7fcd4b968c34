package ledger

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Defaults of SetSnapshots' callers: a snapshot every 1000 blocks, the two
// newest kept (one being served while the next is taken).
const (
	DefaultSnapshotInterval = 1000
	DefaultSnapshotKeep     = 2
)

// snapshots is the Ledger's periodic snapshotting. running and pin are
// guarded by the Ledger's lock; the reading itself runs without it, from
// the root committed at the snapshot's height, which the pin keeps Prune
// from deleting.
type snapshots struct {
	interval int64
	keep     int
	chunkMax int
	store    *snapshotStore

	running bool
	pin     common.Hash
	newest  int64 // height of the newest finished snapshot, 0 = none

	wg      sync.WaitGroup
	stopped atomic.Bool
}

func (s *snapshots) pinned() []common.Hash {
	if !s.running {
		return nil
	}
	return []common.Hash{s.pin}
}

// stop makes a snapshot being taken give up and waits for it.
func (s *snapshots) stop() {
	s.stopped.Store(true)
	s.wg.Wait()
}

// errSnapshotStopped ends a snapshot taken while the Ledger closes.
var errSnapshotStopped = errors.New("ledger: snapshot: ledger closing")

// SetSnapshots makes Commit take a snapshot of the state every interval
// heights, in the background, and keep the newest keep; interval 0 takes
// none. Snapshots live beside the state directory (DIR-snapshots), or in
// memory for an in-memory ledger. Call it before the first Commit.
func (l *Ledger) SetSnapshots(interval, keep int64) error {
	if interval < 0 || keep < 1 {
		return fmt.Errorf("ledger: snapshots every %d heights keeping %d: want interval ≥ 0 and keep ≥ 1", interval, keep)
	}
	dir := ""
	if l.dir != "" {
		dir = l.dir + "-snapshots"
	}
	st, err := newSnapshotStore(dir)
	if err != nil {
		return err
	}
	have, err := st.list()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.snap.interval, l.snap.keep, l.snap.store = interval, int(min(keep, 1<<20)), st
	if len(have) > 0 {
		l.snap.newest = have[0].Height
	}
	if l.snap.chunkMax == 0 {
		l.snap.chunkMax = SnapshotChunkMax
	}
	return nil
}

// maybeSnapshot starts a snapshot of root, committed at the block at, when
// its height is due for one. A snapshot still being taken makes it skip
// this one: snapshots are a courtesy to joining nodes, blocks are not.
func (l *Ledger) maybeSnapshot(at Stamp, root common.Hash) {
	height := at.Height
	s := &l.snap
	if s.interval <= 0 || height%s.interval != 0 || s.stopped.Load() {
		return
	}
	if s.running {
		l.log.Warn("ledger: snapshot skipped, the previous one is still being taken", "height", height)
		return
	}
	s.running, s.pin = true, root
	// Read under l.mu (Commit holds it): SetSnapshots may replace them
	// while this snapshot is being taken.
	st, keep := s.store, s.keep
	s.wg.Go(func() {
		start := time.Now()
		m, err := l.takeSnapshot(st, at, root)
		l.mu.Lock()
		s.running, s.pin = false, common.Hash{}
		if err == nil {
			s.newest = max(s.newest, height)
		}
		l.mu.Unlock()
		if err != nil {
			l.log.Error("ledger: snapshot", "height", height, "err", err)
			return
		}
		if err := st.prune(keep); err != nil {
			l.log.Error("ledger: prune snapshots", "err", err)
		}
		l.log.Info("ledger: snapshot taken", "height", height, "pairs", m.Pairs, "chunks", len(m.Chunks),
			"took", time.Since(start))
	})
}

// takeSnapshot writes the pairs of the state at root, committed at the
// block at, in chunks.
func (l *Ledger) takeSnapshot(st *snapshotStore, at Stamp, root common.Hash) (SnapshotMeta, error) {
	m := SnapshotMeta{Height: at.Height, Time: at.Time, AppHash: root}
	w, err := st.create(at.Height)
	if err != nil {
		return m, err
	}
	err = l.writeSnapshot(root, &m, w)
	if err == nil {
		err = w.finish(m)
	}
	if err != nil {
		w.abort()
	}
	return m, err
}

func (l *Ledger) writeSnapshot(root common.Hash, m *SnapshotMeta, w *snapshotWriter) error {
	t, err := l.store.Open(root)
	if err != nil {
		return err
	}
	it, err := t.NodeIterator(nil)
	if err != nil {
		return fmt.Errorf("ledger: snapshot: %w", err)
	}
	var buf []byte
	flush := func() error {
		m.Chunks = append(m.Chunks, sha256.Sum256(buf))
		err := w.chunk(len(m.Chunks)-1, buf)
		buf = nil
		return err
	}
	for it.Next(true) {
		if !it.Leaf() {
			continue
		}
		if l.snap.stopped.Load() {
			return errSnapshotStopped
		}
		k, v := it.LeafKey(), it.LeafBlob()
		n := pairSize(k, v)
		if n > l.snap.chunkMax {
			return fmt.Errorf("ledger: snapshot: pair of %d bytes at key %x exceeds a chunk", n, k)
		}
		if len(buf)+n > l.snap.chunkMax {
			if err := flush(); err != nil {
				return err
			}
		}
		buf = appendPair(buf, k, v)
		m.Pairs++
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("ledger: snapshot: iterate %x: %w", root, err)
	}
	return flush()
}

// NewestSnapshot is the height of the newest finished snapshot (0 =
// none yet) and whether snapshots are taken at all.
func (l *Ledger) NewestSnapshot() (height int64, enabled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.snap.newest, l.snap.interval > 0
}

// Snapshots lists the finished snapshots, newest first.
func (l *Ledger) Snapshots() ([]SnapshotMeta, error) {
	l.mu.Lock()
	st := l.snap.store
	l.mu.Unlock()
	if st == nil {
		return nil, nil
	}
	return st.list()
}

// SnapshotChunk is chunk i of the snapshot at height.
func (l *Ledger) SnapshotChunk(height int64, i uint32) ([]byte, error) {
	l.mu.Lock()
	st := l.snap.store
	l.mu.Unlock()
	if st == nil {
		return nil, fmt.Errorf("ledger: no snapshots kept")
	}
	return st.chunk(height, i)
}

// WaitSnapshot waits for the snapshot being taken, if any.
func (l *Ledger) WaitSnapshot() { l.snap.wg.Wait() }
