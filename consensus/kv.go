package consensus

import (
	"fmt"
	"sort"

	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// MaxValueBytes bounds a stored state value when it is decoded.
const MaxValueBytes = 4 << 20

// kv is the state a transaction reads and writes.
type kv interface {
	get(key []byte) ([]byte, error)
	set(key, val []byte)
	del(key []byte)
}

// trieKV adapts a trie. Writes that fail are kept and reported by err, so
// a broken store fails the block instead of silently dropping a write.
type trieKV struct {
	t   *trie.Trie
	err error
}

func (k *trieKV) get(key []byte) ([]byte, error) {
	v, err := k.t.Get(key)
	if err != nil {
		return nil, fmt.Errorf("consensus: read %q: %w", key, err)
	}
	return v, nil
}

func (k *trieKV) set(key, val []byte) {
	if err := k.t.Update(key, val); err != nil && k.err == nil {
		k.err = fmt.Errorf("consensus: write %q: %w", key, err)
	}
}

func (k *trieKV) del(key []byte) {
	if err := k.t.Delete(key); err != nil && k.err == nil {
		k.err = fmt.Errorf("consensus: delete %q: %w", key, err)
	}
}

// overlay buffers writes over a parent until flush, so a transaction that
// fails half-way is dropped whole. A nil value marks a deletion.
type overlay struct {
	parent kv
	writes map[string][]byte
}

func newOverlay(parent kv) *overlay {
	return &overlay{parent: parent, writes: make(map[string][]byte)}
}

func (o *overlay) get(key []byte) ([]byte, error) {
	if v, ok := o.writes[string(key)]; ok {
		return v, nil
	}
	return o.parent.get(key)
}

func (o *overlay) set(key, val []byte) { o.writes[string(key)] = val }
func (o *overlay) del(key []byte)      { o.writes[string(key)] = nil }

// flush applies the buffered writes to the parent in key order.
func (o *overlay) flush() {
	keys := make([]string, 0, len(o.writes))
	for k := range o.writes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := o.writes[k]; v == nil {
			o.parent.del([]byte(k))
		} else {
			o.parent.set([]byte(k), v)
		}
	}
	clear(o.writes)
}

// load decodes the value at key into v; it reports false when absent.
func load(s kv, key []byte, v any) (bool, error) {
	b, err := s.get(key)
	if err != nil {
		return false, err
	}
	if len(b) == 0 {
		return false, nil
	}
	if err := cborx.UnmarshalCanonical(b, MaxValueBytes, v); err != nil {
		return false, fmt.Errorf("consensus: state value %q: %w", key, err)
	}
	return true, nil
}

// store encodes v at key.
func store(s kv, key []byte, v any) error {
	b, err := cborx.Marshal(v)
	if err != nil {
		return fmt.Errorf("consensus: encode %q: %w", key, err)
	}
	s.set(key, b)
	return nil
}
