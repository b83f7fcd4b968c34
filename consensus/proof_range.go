package consensus

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethdb/memorydb"
	"github.com/ethereum/go-ethereum/trie"
	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// RangeProofOpType names a range proof in a query's proof ops: Key is the
// first key of the range, Data the CBOR of a RangeProof.
const RangeProofOpType = "tenzro/mpt-range/v1"

// MaxRangeEntries bounds the entries one range proof carries; a longer
// range must be split.
const MaxRangeEntries = 10_000

// RangeProof proves the complete contents of a key range [First, Last] of
// the state: Keys and Values are every entry in the range, in key order,
// possibly followed by the first entry after Last (so a verifier sees that
// nothing else lies before it); Nodes are the trie nodes on the paths to
// First and to the last key listed. It uses go-ethereum's range proofs (the
// ones snap sync relies on), so all keys must have the length of First.
type RangeProof struct {
	First  []byte   `cbor:"1,keyasint" json:"first"`
	Last   []byte   `cbor:"2,keyasint" json:"last"`
	Keys   [][]byte `cbor:"3,keyasint" json:"keys"`
	Values [][]byte `cbor:"4,keyasint" json:"values"`
	Nodes  [][]byte `cbor:"5,keyasint" json:"nodes"`
}

// proveRange builds the range proof of [first, last] in t; it fails when
// the range holds more than MaxRangeEntries entries.
func proveRange(t *trie.Trie, first, last []byte) (RangeProof, error) {
	p := RangeProof{First: first, Last: last}
	nit, err := t.NodeIterator(first)
	if err != nil {
		return p, fmt.Errorf("consensus: iterate from %x: %w", first, err)
	}
	it := trie.NewIterator(nit)
	for it.Next() {
		if len(p.Keys) == MaxRangeEntries {
			return p, reject(ledger.CodeTooLarge, "range holds more than %d entries; split it", MaxRangeEntries)
		}
		p.Keys = append(p.Keys, bytes.Clone(it.Key))
		p.Values = append(p.Values, bytes.Clone(it.Value))
		if bytes.Compare(it.Key, last) > 0 {
			break // the successor: proves nothing else lies in the range
		}
	}
	if it.Err != nil {
		return p, fmt.Errorf("consensus: iterate from %x: %w", first, it.Err)
	}
	db := memorydb.New()
	if err := t.Prove(first, db); err != nil {
		return p, fmt.Errorf("consensus: prove %x: %w", first, err)
	}
	if n := len(p.Keys); n > 0 {
		if err := t.Prove(p.Keys[n-1], db); err != nil {
			return p, fmt.Errorf("consensus: prove %x: %w", p.Keys[n-1], err)
		}
	}
	dit := db.NewIterator(nil, nil)
	for dit.Next() {
		p.Nodes = append(p.Nodes, bytes.Clone(dit.Value()))
	}
	dit.Release()
	return p, nil
}

// VerifyRange checks a range proof against a state root (an app hash) for
// exactly the range [first, last] the caller wants (never taken from the
// proof) and returns every entry of the state in that range: entries
// proven, and proven to be all of them.
func VerifyRange(root, first, last []byte, p RangeProof) (keys, values [][]byte, err error) {
	if len(root) != common.HashLength {
		return nil, nil, fmt.Errorf("consensus: root is %d bytes, want %d", len(root), common.HashLength)
	}
	if !bytes.Equal(p.First, first) || !bytes.Equal(p.Last, last) {
		return nil, nil, fmt.Errorf("consensus: range proof covers [%x, %x], want [%x, %x]", p.First, p.Last, first, last)
	}
	if len(p.Keys) > MaxRangeEntries+1 {
		return nil, nil, fmt.Errorf("consensus: range proof has %d entries, limit %d", len(p.Keys), MaxRangeEntries+1)
	}
	db := memorydb.New()
	for _, n := range p.Nodes {
		if err := db.Put(crypto.Keccak256(n), n); err != nil {
			return nil, nil, fmt.Errorf("consensus: range proof: %w", err)
		}
	}
	more, err := trie.VerifyRangeProof(common.BytesToHash(root), first, p.Keys, p.Values, db)
	if err != nil {
		return nil, nil, fmt.Errorf("consensus: range proof does not verify: %w", err)
	}
	n := len(p.Keys)
	if n > 0 && bytes.Compare(p.Keys[n-1], last) > 0 {
		n-- // the successor, outside the range
		if n > 0 && bytes.Compare(p.Keys[n-1], last) > 0 {
			return nil, nil, fmt.Errorf("consensus: range proof lists two keys after %x", last)
		}
	} else if more && n > 0 {
		return nil, nil, fmt.Errorf("consensus: range proof stops at %x but the state holds more keys after it", p.Keys[n-1])
	}
	return p.Keys[:n], p.Values[:n], nil
}

// Errors of VerifyRecordRange besides a failing range proof.
var (
	// ErrRecordMismatch: a listed record is not the one the proven index
	// entry commits to, or records are missing or extra.
	ErrRecordMismatch = errors.New("consensus: record does not match its proven index entry")
	// ErrForeignRecord: a listed record belongs to another payer (or, in a
	// provider range, was paid to another machine).
	ErrForeignRecord = errors.New("consensus: record belongs to another account")
)
