package consensus

import (
	"bytes"
	"fmt"
	"sort"

	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"
	"github.com/ethereum/go-ethereum/ethdb/memorydb"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// ProofOpType names the proof operations Query returns: Key is the state
// key, Data the CBOR of a Proof against the state root of the queried
// height (the app hash in the header of the next height).
const ProofOpType = "tenzro/mpt/v1"

// MaxProofBytes bounds an encoded proof.
const MaxProofBytes = 64 << 10

// Proof is a Merkle-Patricia proof: the RLP trie nodes on the path from the
// root to a key, in byte order. It proves a value or its absence.
type Proof struct {
	Nodes [][]byte `cbor:"1,keyasint"`
}

// proveKey builds the proof of key in t.
func proveKey(t *trie.Trie, key []byte) (Proof, error) {
	db := memorydb.New()
	if err := t.Prove(key, db); err != nil {
		return Proof{}, fmt.Errorf("consensus: prove %q: %w", key, err)
	}
	var p Proof
	it := db.NewIterator(nil, nil)
	for it.Next() {
		p.Nodes = append(p.Nodes, bytes.Clone(it.Value()))
	}
	it.Release()
	sort.Slice(p.Nodes, func(i, j int) bool { return bytes.Compare(p.Nodes[i], p.Nodes[j]) < 0 })
	return p, nil
}

func proofOp(t *trie.Trie, key []byte) (cmtcrypto.ProofOp, error) {
	p, err := proveKey(t, key)
	if err != nil {
		return cmtcrypto.ProofOp{}, err
	}
	b, err := cborx.Marshal(p)
	if err != nil {
		return cmtcrypto.ProofOp{}, fmt.Errorf("consensus: encode proof: %w", err)
	}
	return cmtcrypto.ProofOp{Type: ProofOpType, Key: key, Data: b}, nil
}
