package ledger_test

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// BenchmarkStoreRecords measures the two candidate stores for payment
// records, 1000 records per op: the Merkle-Patricia state trie (insert,
// hash, stage, commit to an in-memory disk; proofs against the app hash)
// and an RFC 6962 compact range (append and root only; inclusion proofs
// would need the node store and a second root kept in state).
func BenchmarkStoreRecords(b *testing.B) {
	const n = 1000
	leaf := func(i int) []byte {
		h := sha256.Sum256(binary.BigEndian.AppendUint64(nil, uint64(i)))
		return h[:]
	}
	b.Run("mpt", func(b *testing.B) {
		st, err := ledger.OpenStore("")
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		i := 0
		for range b.N {
			t, err := st.Open(st.Root())
			if err != nil {
				b.Fatal(err)
			}
			for range n {
				l := leaf(i)
				if err := t.Update(append([]byte("r/"), l...), l); err != nil {
					b.Fatal(err)
				}
				i++
			}
			root, err := st.Stage(t, st.Root(), st.Height()+1)
			if err != nil {
				b.Fatal(err)
			}
			if err := st.Commit(root, st.Height()+1, st.Height()+1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	})
	b.Run("rfc6962", func(b *testing.B) {
		rf := &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
		r := rf.NewEmptyRange(0)
		i := 0
		for range b.N {
			for range n {
				if err := r.Append(rfc6962.DefaultHasher.HashLeaf(leaf(i)), nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if _, err := r.GetRootHash(nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	})
}
