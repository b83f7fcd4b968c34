package validator

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// savedVote is a committed verdict and its salt: lose it and the member
// cannot reveal, so it is on disk before the commitment is submitted.
type savedVote struct {
	Verdict ledger.Verdict `json:"verdict"`
	Salt    terms.Hash32   `json:"salt"`
}

// voteStore keeps the committed votes in one small JSON file, rewritten
// atomically (temporary file, fsync, rename, fsync of the directory) so a
// restart between commit and reveal still reveals.
type voteStore struct {
	path  string
	mu    sync.Mutex
	votes map[string]savedVote
}

func voteKey(id terms.Hash32, round uint8) string { return fmt.Sprintf("%s/%d", id, round) }

func openVoteStore(path string) (*voteStore, error) {
	s := &voteStore{path: path, votes: map[string]savedVote{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("validator: read votes: %w", err)
	}
	if err := json.Unmarshal(b, &s.votes); err != nil {
		return nil, fmt.Errorf("validator: votes file %s: %w", path, err)
	}
	return s, nil
}

func (s *voteStore) get(id terms.Hash32, round uint8) (savedVote, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.votes[voteKey(id, round)]
	return v, ok
}

// put records a vote durably.
func (s *voteStore) put(id terms.Hash32, round uint8, v savedVote) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.votes[voteKey(id, round)] = v
	return s.flush()
}

// drop forgets a revealed vote.
func (s *voteStore) drop(id terms.Hash32, round uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.votes, voteKey(id, round))
	return s.flush()
}

func (s *voteStore) flush() error {
	b, err := json.Marshal(s.votes)
	if err != nil {
		return fmt.Errorf("validator: encode votes: %w", err)
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("validator: votes dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".votes-*")
	if err != nil {
		return fmt.Errorf("validator: write votes: %w", err)
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // a no-op once renamed; else the write's error is returned
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("validator: write votes: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("validator: write votes: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("validator: sync votes dir: %w", err)
	}
	defer d.Close() //nolint:errcheck // the directory is synced; its handle holds no data
	if err := d.Sync(); err != nil {
		return fmt.Errorf("validator: sync votes dir: %w", err)
	}
	return nil
}
