package consensus

import (
	"context"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// RecordRange is a payer's complete list of payment records settled at
// heights From..To, as of the state after block Height, with the range
// proof of their index entries against that state's root (the app hash in
// the header of block Height+1).
type RecordRange struct {
	Payer    terms.AccountID
	From, To int64
	Height   int64
	Records  []ledger.SettledRecord
	Proof    RangeProof
}

// queryRecordRange answers recordrange/<payer>/<from>/<to>, its segments
// parsed by its route.
func queryRecordRange(t *trie.Trie, payer terms.AccountID, from, to int64) (*abci.QueryResponse, error) {
	first, last := ledger.RecordIndexRange(payer, from, to)
	return proveRecords(t, first, last, func(k, _ []byte) (terms.AccountID, terms.Hash32, error) {
		var d terms.Hash32
		copy(d[:], k[42:])
		return payer, d, nil
	})
}

// proveRecords answers a record-range query over the index keys
// first..last: the range proof of the index entries and, as the value,
// the settled records they name, located by locate from each entry.
func proveRecords(t *trie.Trie, first, last []byte, locate func(k, v []byte) (terms.AccountID, terms.Hash32, error)) (*abci.QueryResponse, error) {
	p, err := proveRange(t, first, last)
	if err != nil {
		return nil, err
	}
	var recs []ledger.SettledRecord
	for i, k := range p.Keys {
		if len(k) != len(first) || string(k[:34]) != string(first[:34]) || string(k) > string(last) {
			continue // the successor entry
		}
		payer, d, err := locate(k, p.Values[i])
		if err != nil {
			return nil, err
		}
		var sr ledger.SettledRecord
		ok, err := ledger.Load(ledger.NewTrieKV(t), ledger.KeyRecord(payer, d), &sr)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("consensus: index entry %x has no record", k)
		}
		recs = append(recs, sr)
	}
	value, err := cborx.Marshal(recs)
	if err != nil {
		return nil, fmt.Errorf("consensus: encode records: %w", err)
	}
	data, err := cborx.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("consensus: encode range proof: %w", err)
	}
	op := cmtcrypto.ProofOp{Type: RangeProofOpType, Key: first, Data: data}
	return &abci.QueryResponse{Key: first, Value: value, ProofOps: &cmtcrypto.ProofOps{Ops: []cmtcrypto.ProofOp{op}}}, nil
}

// queryRange runs a record-range query at height and checks the state
// it answered from covers the range end to.
func (n *Node) queryRange(ctx context.Context, path string, to, height int64) (QueryResult, error) {
	r, err := n.Query(ctx, path, height)
	if err != nil {
		return r, err
	}
	if r.Height < to {
		return r, fmt.Errorf("consensus: state height %d is below the range end %d", r.Height, to)
	}
	return r, nil
}

// parseRangeAnswer decodes a record-range answer's records and its one
// range proof op.
func parseRangeAnswer(value []byte, ops []cmtcrypto.ProofOp, recs *[]ledger.SettledRecord, proof *RangeProof) error {
	if err := cborx.UnmarshalCanonical(value, maxRangeResponse, recs); err != nil {
		return fmt.Errorf("consensus: records: %w", err)
	}
	if len(ops) != 1 || ops[0].Type != RangeProofOpType {
		return fmt.Errorf("consensus: want one %s proof op, got %d", RangeProofOpType, len(ops))
	}
	if err := cborx.UnmarshalCanonical(ops[0].Data, maxRangeResponse, proof); err != nil {
		return fmt.Errorf("consensus: range proof: %w", err)
	}
	return nil
}

// maxRangeResponse bounds a decoded record-range answer and its proof.
const maxRangeResponse = 64 << 20

// RecordRange returns payer's records settled at heights from..to as of
// the state after block height (0 = latest committed; it must be >= to),
// with their range proof. It does not verify the proof; VerifyRecordRange
// or the evidence package does.
func (n *Node) RecordRange(ctx context.Context, payer terms.AccountID, from, to, height int64) (RecordRange, error) {
	path := fmt.Sprintf("recordrange/%s/%d/%d", payer, from, to)
	r, err := n.queryRange(ctx, path, to, height)
	if err != nil {
		return RecordRange{}, err
	}
	out, err := ParseRecordRange(payer, from, to, r.Height, r.Value, r.Proof)
	if err != nil {
		return out, fmt.Errorf("consensus: %s: %w", path, err)
	}
	return out, nil
}

// ParseRecordRange decodes the answer (value and proof ops) to a
// recordrange query made at height. It does not verify the proof.
func ParseRecordRange(payer terms.AccountID, from, to, height int64, value []byte, ops []cmtcrypto.ProofOp) (RecordRange, error) {
	out := RecordRange{Payer: payer, From: from, To: to, Height: height}
	return out, parseRangeAnswer(value, ops, &out.Records, &out.Proof)
}

// VerifyRecordRange checks rr against root (the app hash of the header
// that commits to the state after rr.Height): the range proof must cover
// exactly payer's index range From..To, and rr.Records must be exactly the
// records the proven index entries name, in order, each hashing to its
// entry. It returns nil only if the records are all, and only, the records
// payer settled at those heights.
func VerifyRecordRange(root []byte, rr RecordRange) error {
	first, last := ledger.RecordIndexRange(rr.Payer, rr.From, rr.To)
	return verifyRecords(root, first, last, rr.Proof, rr.Records, recordIndex{
		foreign: func(sr ledger.SettledRecord) string {
			if sr.Record.Payer == rr.Payer {
				return ""
			}
			return fmt.Sprintf("is paid by %s, not %s", sr.Record.Payer, rr.Payer)
		},
		entry: func(sr ledger.SettledRecord, h terms.Hash32) (key, value []byte) {
			return ledger.KeyRecordIndex(sr.Record.Payer, sr.Height, sr.Record.RequestDigest), h[:]
		},
	})
}

// recordIndex is what differs between the payer and the provider record
// indexes; verifyRecords does the rest, so both proofs are checked by the
// same code.
type recordIndex struct {
	// foreign says why a record does not belong to the range's owner, or
	// "" when it does.
	foreign func(sr ledger.SettledRecord) string
	// entry is the index key and value that must prove sr, given h, the
	// hash of its encoding.
	entry func(sr ledger.SettledRecord, h terms.Hash32) (key, value []byte)
}

// verifyRecords checks that proof covers exactly [first, last] under root
// and that recs are exactly the records its entries name, in order: each
// belongs to the owner and hashes to the value proven at its own key.
// first and last come from the caller's request, never from the proof.
func verifyRecords(root, first, last []byte, proof RangeProof, recs []ledger.SettledRecord, idx recordIndex) error {
	keys, values, err := VerifyRange(root, first, last, proof)
	if err != nil {
		return err
	}
	if len(keys) != len(recs) {
		return fmt.Errorf("%w: %d records listed, the proven index holds %d", ErrRecordMismatch, len(recs), len(keys))
	}
	for i, sr := range recs {
		if why := idx.foreign(sr); why != "" {
			return fmt.Errorf("%w: record %d %s", ErrForeignRecord, i, why)
		}
		enc, err := cborx.Marshal(sr)
		if err != nil {
			return fmt.Errorf("%w: record %d: %w", ErrRecordMismatch, i, err)
		}
		key, value := idx.entry(sr, ledger.RecordIndexValue(enc))
		if string(keys[i]) != string(key) || string(values[i]) != string(value) {
			return fmt.Errorf("%w: record %d (height %d, request %s) is not the one proven at index entry %x",
				ErrRecordMismatch, i, sr.Height, sr.Record.RequestDigest, keys[i])
		}
	}
	return nil
}
