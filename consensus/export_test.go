package consensus

import (
	"bytes"
	"fmt"

	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethdb/memorydb"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// DropPeersGracefully disconnects every CometBFT peer the way a graceful
// stop does, which CometBFT never redials itself: only the watchdog can
// bring a persistent peer back.
func (n *Node) DropPeersGracefully() int {
	sw := n.cmt.Switch()
	ps := sw.Peers().Copy()
	for _, p := range ps {
		sw.StopPeerGracefully(p)
	}
	return len(ps)
}

// RouteNames lists the first segments of every query route, so a table
// test can show it covers them all.
func RouteNames() []string {
	names := make([]string, 0, len(routes))
	for n := range routes {
		names = append(names, n)
	}
	return names
}

// The node answers its own queries, so only the tests check single-key
// proofs the way an offline client would; the checks live here.

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
