package consensus

import (
	"bytes"
	"fmt"

	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// openStreams lists up to MaxListed of payer's open streams: the entries
// of its stream index, then the stream each names, both read through r so
// both are proven.
func openStreams(t *trie.Trie, r *recorder, payer terms.AccountID) ([]ledger.Stream, error) {
	prefix := ledger.StreamIndexPrefix(payer)
	nit, err := t.NodeIteratorWithPrefix(prefix)
	if err != nil {
		return nil, fmt.Errorf("consensus: iterate streams of %s: %w", payer, err)
	}
	it := trie.NewIterator(nit)
	var keys [][]byte
	for len(keys) < MaxListed && it.Next() {
		keys = append(keys, bytes.Clone(it.Key))
	}
	if it.Err != nil {
		return nil, fmt.Errorf("consensus: iterate streams of %s: %w", payer, it.Err)
	}
	out := make([]ledger.Stream, 0, len(keys))
	for _, k := range keys {
		id, ok := ledger.StreamIDOfIndexKey(k)
		if !ok {
			return nil, fmt.Errorf("consensus: stream index key %x of %d bytes", k, len(k))
		}
		if _, err := r.Get(k); err != nil {
			return nil, err
		}
		var s ledger.Stream
		ok, err := ledger.Load(r, ledger.KeyStream(id), &s)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("consensus: stream index of %s names stream %s, which is not in state", payer, id)
		}
		out = append(out, s)
	}
	return out, nil
}
