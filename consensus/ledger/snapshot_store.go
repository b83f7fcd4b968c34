package ledger

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
)

// snapshotStore keeps finished snapshots: under dir as dir/<height>/meta
// and dir/<height>/<chunk index>, or in memory when dir is "". A snapshot
// is written under a temporary name and renamed when whole, so a crash
// never leaves a listed snapshot with missing chunks.
type snapshotStore struct {
	dir string

	mu  sync.Mutex
	mem map[int64]*memSnapshot
}

type memSnapshot struct {
	meta   SnapshotMeta
	chunks [][]byte
}

func newSnapshotStore(dir string) (*snapshotStore, error) {
	s := &snapshotStore{dir: dir, mem: map[int64]*memSnapshot{}}
	if dir == "" {
		return s, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ledger: snapshot dir: %w", err)
	}
	// Leftovers of a snapshot interrupted by a crash.
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	for _, t := range tmps {
		if err := os.RemoveAll(t); err != nil {
			return nil, fmt.Errorf("ledger: snapshot dir: %w", err)
		}
	}
	return s, nil
}

// snapshotWriter receives one snapshot's chunks in order, then its meta.
type snapshotWriter struct {
	s      *snapshotStore
	height int64
	tmp    string
	chunks [][]byte
}

func (s *snapshotStore) create(height int64) (*snapshotWriter, error) {
	w := &snapshotWriter{s: s, height: height}
	if s.dir == "" {
		return w, nil
	}
	w.tmp = filepath.Join(s.dir, strconv.FormatInt(height, 10)+".tmp")
	if err := os.RemoveAll(w.tmp); err != nil {
		return nil, fmt.Errorf("ledger: snapshot %d: %w", height, err)
	}
	if err := os.Mkdir(w.tmp, 0o700); err != nil {
		return nil, fmt.Errorf("ledger: snapshot %d: %w", height, err)
	}
	return w, nil
}

func (w *snapshotWriter) chunk(i int, b []byte) error {
	if w.tmp == "" {
		w.chunks = append(w.chunks, b)
		return nil
	}
	if err := os.WriteFile(filepath.Join(w.tmp, strconv.Itoa(i)), b, 0o600); err != nil {
		return fmt.Errorf("ledger: snapshot %d chunk %d: %w", w.height, i, err)
	}
	return nil
}

// finish makes the snapshot whole and listed.
func (w *snapshotWriter) finish(m SnapshotMeta) error {
	if w.tmp == "" {
		w.s.mu.Lock()
		defer w.s.mu.Unlock()
		w.s.mem[m.Height] = &memSnapshot{meta: m, chunks: w.chunks}
		return nil
	}
	if err := os.WriteFile(filepath.Join(w.tmp, "meta"), m.Encode(), 0o600); err != nil {
		return fmt.Errorf("ledger: snapshot %d meta: %w", w.height, err)
	}
	final := filepath.Join(w.s.dir, strconv.FormatInt(w.height, 10))
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("ledger: snapshot %d: %w", w.height, err)
	}
	if err := os.Rename(w.tmp, final); err != nil {
		return fmt.Errorf("ledger: snapshot %d: %w", w.height, err)
	}
	return nil
}

// abort drops a snapshot that will not be finished.
func (w *snapshotWriter) abort() {
	if w.tmp != "" {
		_ = os.RemoveAll(w.tmp)
	}
}

// list returns the finished snapshots, newest first. A directory whose
// meta does not decode is skipped, not served.
func (s *snapshotStore) list() ([]SnapshotMeta, error) {
	var out []SnapshotMeta
	if s.dir == "" {
		s.mu.Lock()
		for _, m := range s.mem {
			out = append(out, m.meta)
		}
		s.mu.Unlock()
	} else {
		ents, err := os.ReadDir(s.dir)
		if err != nil {
			return nil, fmt.Errorf("ledger: list snapshots: %w", err)
		}
		for _, e := range ents {
			if _, err := strconv.ParseInt(e.Name(), 10, 64); err != nil || !e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(s.dir, e.Name(), "meta"))
			if err != nil {
				continue
			}
			if m, err := DecodeSnapshotMeta(b); err == nil {
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b SnapshotMeta) int { return cmp.Compare(b.Height, a.Height) })
	return out, nil
}

// chunk returns chunk i of the snapshot at height.
func (s *snapshotStore) chunk(height int64, i uint32) ([]byte, error) {
	if s.dir == "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		m, ok := s.mem[height]
		if !ok || int(i) >= len(m.chunks) {
			return nil, fmt.Errorf("ledger: no snapshot chunk %d at height %d", i, height)
		}
		return m.chunks[i], nil
	}
	b, err := os.ReadFile(filepath.Join(s.dir, strconv.FormatInt(height, 10), strconv.FormatUint(uint64(i), 10)))
	if err != nil {
		return nil, fmt.Errorf("ledger: snapshot chunk %d at height %d: %w", i, height, err)
	}
	return b, nil
}

// prune deletes all but the newest keep snapshots.
func (s *snapshotStore) prune(keep int) error {
	all, err := s.list()
	if err != nil || len(all) <= keep {
		return err
	}
	var errs []error
	for _, m := range all[keep:] {
		if s.dir == "" {
			s.mu.Lock()
			delete(s.mem, m.Height)
			s.mu.Unlock()
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, strconv.FormatInt(m.Height, 10))); err != nil {
			errs = append(errs, fmt.Errorf("ledger: prune snapshot %d: %w", m.Height, err))
		}
	}
	return errors.Join(errs...)
}
