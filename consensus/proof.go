package consensus

import (
	"bytes"
	"fmt"
	"sort"

	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
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

// VerifyProof checks an encoded Proof of key against a state root (an app
// hash) and returns the proven value; a nil value with a nil error proves
// the key absent.
func VerifyProof(root []byte, key []byte, proof []byte) ([]byte, error) {
	if len(root) != common.HashLength {
		return nil, fmt.Errorf("consensus: root is %d bytes, want %d", len(root), common.HashLength)
	}
	var p Proof
	if err := cborx.UnmarshalCanonical(proof, MaxProofBytes, &p); err != nil {
		return nil, fmt.Errorf("consensus: proof: %w", err)
	}
	db := memorydb.New()
	for _, n := range p.Nodes {
		if err := db.Put(crypto.Keccak256(n), n); err != nil {
			return nil, fmt.Errorf("consensus: proof: %w", err)
		}
	}
	v, err := trie.VerifyProof(common.BytesToHash(root), key, db)
	if err != nil {
		return nil, fmt.Errorf("consensus: proof of %q does not verify: %w", key, err)
	}
	return v, nil
}

// VerifyProofOp checks one ProofOp returned by Query against root and
// returns its key and proven value (nil when proven absent).
func VerifyProofOp(root []byte, op cmtcrypto.ProofOp) (key, value []byte, err error) {
	if op.Type != ProofOpType {
		return nil, nil, fmt.Errorf("consensus: proof type %q, want %q", op.Type, ProofOpType)
	}
	v, err := VerifyProof(root, op.Key, op.Data)
	return op.Key, v, err
}

// VerifyQuery checks that a raw-key query's value is exactly what its
// single proof proves against root.
func VerifyQuery(root []byte, value []byte, ops []cmtcrypto.ProofOp) error {
	if len(ops) != 1 {
		return fmt.Errorf("consensus: want 1 proof op, got %d", len(ops))
	}
	_, v, err := VerifyProofOp(root, ops[0])
	if err != nil {
		return err
	}
	if !bytes.Equal(v, value) {
		return fmt.Errorf("consensus: value does not match its proof")
	}
	return nil
}
