package ledger_test

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// FuzzSnapshotMeta: metadata from a peer either is refused or re-encodes
// to exactly the bytes received.
func FuzzSnapshotMeta(f *testing.F) {
	m := ledger.SnapshotMeta{Height: 1000, Pairs: 12, Chunks: make([][32]byte, 3)}
	f.Add(m.Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ledger.DecodeSnapshotMeta(b)
		if err != nil {
			return
		}
		if !bytes.Equal(m.Encode(), b) || m.Height < 1 || len(m.Chunks) == 0 {
			t.Fatalf("decoded %+v from %x", m, b)
		}
	})
}

// FuzzSnapshotChunk: a chunk from a peer either is refused or is a run of
// non-empty pairs whose encoding is exactly the bytes received.
func FuzzSnapshotChunk(f *testing.F) {
	f.Add([]byte{1, 'k', 2, 'v', 'w', 3, 'k', 'e', 'y', 1, 'x'})
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		var again []byte
		err := ledger.DecodeSnapshotChunk(b, func(k, v []byte) error {
			if len(k) == 0 || len(v) == 0 {
				t.Fatalf("empty key or value from %x", b)
			}
			again = ledger.AppendSnapshotPair(again, k, v)
			return nil
		})
		if err == nil && !bytes.Equal(again, b) {
			t.Fatalf("pairs of %x re-encode to %x", b, again)
		}
	})
}
