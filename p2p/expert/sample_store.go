package expert

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultMaxSamples bounds a SampleStore's files (each one batch, some
// kilobytes for small models; the oldest go first).
const DefaultMaxSamples = 4096

// SampleStore keeps files of one kind (stored batches, evidence) in a
// directory under the node's home, at most max of them: writing one more
// prunes the oldest. Names sort in write order (a sequence number first),
// so pruning needs no index.
type SampleStore struct {
	dir string
	max int
	seq atomic.Uint64

	mu sync.Mutex // serialises writes with pruning
}

// OpenSampleStore opens (making it) dir holding at most max files
// (DefaultMaxSamples when max <= 0); numbering continues after the files
// already there.
func OpenSampleStore(dir string, max int) (*SampleStore, error) {
	if max <= 0 {
		max = DefaultMaxSamples
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("expert: sample store: %w", err)
	}
	s := &SampleStore{dir: dir, max: max}
	names, err := s.List()
	if err != nil {
		return nil, err
	}
	if len(names) > 0 {
		var last uint64
		if _, err := fmt.Sscanf(names[len(names)-1], "%020d-", &last); err == nil {
			s.seq.Store(last)
		}
	}
	return s, nil
}

const sampleExt = ".cbor"

// Put writes data under id (atomically: a crash leaves the file whole or
// absent) and prunes the oldest files beyond the bound. It returns the
// file's name.
func (s *SampleStore) Put(id [32]byte, data []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := fmt.Sprintf("%020d-%s%s", s.seq.Add(1), hex.EncodeToString(id[:8]), sampleExt)
	path := filepath.Join(s.dir, name)
	if err := os.WriteFile(path+".tmp", data, 0o600); err != nil {
		return "", fmt.Errorf("expert: sample store: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return "", fmt.Errorf("expert: sample store: %w", err)
	}
	names, err := s.List()
	if err != nil {
		return name, err
	}
	for _, old := range names[:max(0, len(names)-s.max)] {
		if err := os.Remove(filepath.Join(s.dir, old)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return name, fmt.Errorf("expert: sample store prune: %w", err)
		}
	}
	return name, nil
}

// List returns the stored files' names, oldest first.
func (s *SampleStore) List() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("expert: sample store: %w", err)
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, sampleExt) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Get reads the file name (as List gives it).
func (s *SampleStore) Get(name string) ([]byte, error) {
	if filepath.Base(name) != name || !strings.HasSuffix(name, sampleExt) {
		return nil, fmt.Errorf("expert: sample store: bad name %q", name)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return nil, fmt.Errorf("expert: sample store: %w", err)
	}
	return b, nil
}

// Remove deletes the file name; a missing file is not an error.
func (s *SampleStore) Remove(name string) error {
	if filepath.Base(name) != name {
		return fmt.Errorf("expert: sample store: bad name %q", name)
	}
	if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("expert: sample store: %w", err)
	}
	return nil
}

// Find returns the newest file stored under id, if any: a store keyed by
// what it binds (a binding by its receipt's hash) is looked up without
// an index, by the 8 bytes of id each name carries.
func (s *SampleStore) Find(id [32]byte) (string, bool, error) {
	idx, err := s.Index()
	if err != nil {
		return "", false, err
	}
	name, ok := idx[IndexKey(id)]
	return name, ok, nil
}

// IndexKey is how a file stored under id is known in Index: the hex of
// its first 8 bytes, which the file's name carries.
func IndexKey(id [32]byte) string { return hex.EncodeToString(id[:8]) }

// KeyOf is the index key a file name (as List gives it) carries.
func KeyOf(name string) string {
	_, key, _ := strings.Cut(strings.TrimSuffix(name, sampleExt), "-")
	return key
}

// Index maps each index key to the newest file stored under it, from
// one listing: a round over many files looks each up without listing
// the directory again.
func (s *SampleStore) Index() (map[string]string, error) {
	names, err := s.List()
	if err != nil {
		return nil, err
	}
	idx := make(map[string]string, len(names))
	for _, n := range names { // oldest first: the newest wins
		idx[KeyOf(n)] = n
	}
	return idx, nil
}
