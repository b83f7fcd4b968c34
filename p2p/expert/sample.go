package expert

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SampleRate is the expected share of verified batches stored for
// re-execution: one in SampleRate.
const SampleRate = 64

// SampleDomain separates the sampling hash from every other keyed hash.
const SampleDomain = "tenzro/v1/expert-sample"

// SampleKeySize is the size of a caller's sampling secret.
const SampleKeySize = 32

// Sampler decides which verified batches a caller stores. The decision is
// HMAC-SHA256 under the caller's secret over the holder's signed receipt
// envelope and the batch's index in it, computed only once that envelope
// exists: the holder, which knows neither the secret nor (before signing)
// its own signature bytes, cannot tell which of its answers are kept.
type Sampler struct {
	key   [SampleKeySize]byte
	every uint64 // SampleRate; tests of re-execution lower it to see every batch
}

// NewSampler makes a sampler over a secret of SampleKeySize bytes.
func NewSampler(key []byte) (*Sampler, error) {
	if len(key) != SampleKeySize {
		return nil, fmt.Errorf("expert: sample key of %d bytes, want %d", len(key), SampleKeySize)
	}
	s := &Sampler{every: SampleRate}
	copy(s.key[:], key)
	return s, nil
}

// Sampled reports whether batch index of the exchange signed by receipt
// (the full envelope bytes, as verified) is stored.
func (s *Sampler) Sampled(receipt []byte, index int) bool {
	if s == nil {
		return false
	}
	return SampleScore(s.key[:], receipt, index)%s.every == 0
}

// SampleScore is the keyed hash a Sampler reduces modulo SampleRate: the
// first 8 bytes of HMAC-SHA256(key, domain ‖ index ‖ receipt).
func SampleScore(key, receipt []byte, index int) uint64 {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(SampleDomain))
	var ib [4]byte
	binary.BigEndian.PutUint32(ib[:], uint32(index))
	m.Write(ib[:])
	m.Write(receipt)
	return binary.BigEndian.Uint64(m.Sum(nil))
}

// LoadSampleKey reads the sampling secret at path, making a random one
// (mode 0600) the first time: it stays with the node's home so a restart
// does not change what was sampled, and never leaves the node.
func LoadSampleKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if len(b) != SampleKeySize {
			return nil, fmt.Errorf("expert: sample key %s has %d bytes, want %d", path, len(b), SampleKeySize)
		}
		return b, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("expert: read sample key: %w", err)
	}
	b = make([]byte, SampleKeySize)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("expert: make sample key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("expert: sample key directory: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return nil, fmt.Errorf("expert: write sample key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("expert: write sample key: %w", err)
	}
	return b, nil
}
