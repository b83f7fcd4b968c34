package ledger

import (
	"fmt"
	"sort"

	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// MaxValueBytes bounds a stored state value when it is decoded.
const MaxValueBytes = 4 << 20

// KV is the state a transaction reads and writes. Set and Del do not
// return errors: implementations that can fail keep the first failure and
// report it once the block is done (TrieKV.Err), so a failing write fails
// the block instead of vanishing.
type KV interface {
	Get(key []byte) ([]byte, error)
	Set(key, val []byte)
	Del(key []byte)
}

// TrieKV adapts a trie to KV.
type TrieKV struct {
	t   *trie.Trie
	err error
}

// NewTrieKV returns a KV over t.
func NewTrieKV(t *trie.Trie) *TrieKV { return &TrieKV{t: t} }

// Err is the first write or delete that failed.
func (k *TrieKV) Err() error { return k.err }

// Get reads a key; a missing key is a nil value.
func (k *TrieKV) Get(key []byte) ([]byte, error) {
	v, err := k.t.Get(key)
	if err != nil {
		return nil, fmt.Errorf("ledger: read %q: %w", key, err)
	}
	return v, nil
}

// Set writes a key.
func (k *TrieKV) Set(key, val []byte) {
	if err := k.t.Update(key, val); err != nil && k.err == nil {
		k.err = fmt.Errorf("ledger: write %q: %w", key, err)
	}
}

// Del deletes a key.
func (k *TrieKV) Del(key []byte) {
	if err := k.t.Delete(key); err != nil && k.err == nil {
		k.err = fmt.Errorf("ledger: delete %q: %w", key, err)
	}
}

// Overlay buffers writes over a parent until Flush, so a transaction that
// fails half-way is dropped whole. A nil value marks a deletion.
type Overlay struct {
	parent KV
	writes map[string][]byte
}

// NewOverlay returns an empty overlay over parent.
func NewOverlay(parent KV) *Overlay {
	return &Overlay{parent: parent, writes: make(map[string][]byte)}
}

// Get reads the buffered value of key, or the parent's.
func (o *Overlay) Get(key []byte) ([]byte, error) {
	if v, ok := o.writes[string(key)]; ok {
		return v, nil
	}
	return o.parent.Get(key)
}

// Set buffers a write.
func (o *Overlay) Set(key, val []byte) { o.writes[string(key)] = val }

// Del buffers a deletion.
func (o *Overlay) Del(key []byte) { o.writes[string(key)] = nil }

// Flush applies the buffered writes to the parent in key order.
func (o *Overlay) Flush() {
	keys := make([]string, 0, len(o.writes))
	for k := range o.writes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := o.writes[k]; v == nil {
			o.parent.Del([]byte(k))
		} else {
			o.parent.Set([]byte(k), v)
		}
	}
	clear(o.writes)
}

// Load decodes the value at key into v; it reports false when absent.
func Load(s KV, key []byte, v any) (bool, error) {
	b, err := s.Get(key)
	if err != nil {
		return false, err
	}
	if len(b) == 0 {
		return false, nil
	}
	if err := cborx.UnmarshalCanonical(b, MaxValueBytes, v); err != nil {
		return false, fmt.Errorf("ledger: state value %q: %w", key, err)
	}
	return true, nil
}

// Save encodes v canonically at key.
func Save(s KV, key []byte, v any) error {
	b, err := cborx.Marshal(v)
	if err != nil {
		return fmt.Errorf("ledger: encode %q: %w", key, err)
	}
	s.Set(key, b)
	return nil
}
