package consensus

import (
	"context"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// RecordOwner is who a record index is kept for: a payer (RecordRange,
// over ledger.KeyRecordIndex) or a provider machine (ProviderRecordRange,
// over ledger.KeyProviderRecordIndex).
type RecordOwner interface {
	terms.AccountID | identity.MachineID
	String() string
}

// RecordSpan is Owner's complete list of payment records settled at
// heights From..To, as of the state after block Height, with the range
// proof of their index entries against that state's root (the app hash in
// the header of block Height+1).
type RecordSpan[O RecordOwner] struct {
	Owner    O
	From, To int64
	Height   int64
	Records  []ledger.SettledRecord
	Proof    RangeProof
}

// ParseRecordRange decodes the answer (value and proof ops) to a
// recordrange or providerrange query for owner made at height. It does not
// verify the proof.
func ParseRecordRange[O RecordOwner](owner O, from, to, height int64, value []byte, ops []cmtcrypto.ProofOp) (RecordSpan[O], error) {
	out := RecordSpan[O]{Owner: owner, From: from, To: to, Height: height}
	return out, parseRangeAnswer(value, ops, &out.Records, &out.Proof)
}

// VerifyRecordRange checks r against root (the app hash of the header
// that commits to the state after r.Height): the range proof must cover
// exactly the owner's index range From..To, and r.Records must be exactly
// the records the proven index entries name, in order, each hashing to its
// entry. It returns nil only if the records are all, and only, the
// owner's records settled at those heights.
func VerifyRecordRange[O RecordOwner](root []byte, r RecordSpan[O]) error {
	return indexOf[O]().verify(root, r)
}

// FetchRecordRange runs the range query for owner's records at from..to
// as of the state after block height (0 = latest committed; it must be >=
// to) and decodes the answer. It does not verify the proof;
// VerifyRecordRange or the evidence package does.
func FetchRecordRange[O RecordOwner](ctx context.Context, n *Node, owner O, from, to, height int64) (RecordSpan[O], error) {
	path := fmt.Sprintf("%s/%s/%d/%d", indexOf[O]().route, owner, from, to)
	r, err := n.Query(ctx, path, height)
	if err != nil {
		return RecordSpan[O]{}, err
	}
	if r.Height < to {
		return RecordSpan[O]{}, fmt.Errorf("consensus: %s: state height %d is below the range end %d", path, r.Height, to)
	}
	out, err := ParseRecordRange(owner, from, to, r.Height, r.Value, r.Proof)
	if err != nil {
		return out, fmt.Errorf("consensus: %s: %w", path, err)
	}
	return out, nil
}

// indexOf is the index kept for owners of type O.
func indexOf[O RecordOwner]() recordIndex[O] {
	var o O
	var x any
	switch any(o).(type) {
	case terms.AccountID:
		x = payerIndex
	case identity.MachineID:
		x = providerIndex
	}
	return x.(recordIndex[O]) //nolint:forcetypeassert // RecordOwner admits only the two types switched on, each with its index
}

// recordIndex is one of the two indexes of settled records, the payer's
// and the provider's, whose entries are keyed by an owner of type O. It
// holds only what differs between them: the one set of methods below
// answers, fetches and checks a span of either, so a fix to the range
// check reaches both proofs at once.
type recordIndex[O RecordOwner] struct {
	// route is the query path's first segment.
	route string
	// bounds is the index key range of o's records settled at heights
	// from..to.
	bounds func(o O, from, to int64) (first, last []byte)
	// locate reads the payer and request digest of the record o's index
	// entry (k, v) names.
	locate func(o O, k, v []byte) (terms.AccountID, terms.Hash32, error)
	// owner reads the record's field that must equal the span's owner
	// (its payer or its provider machine).
	owner func(r *receipt.PaymentRecord) O
	// entry is the index key and value that must prove sr, given h, the
	// hash of its encoding.
	entry func(sr ledger.SettledRecord, h terms.Hash32) (key, value []byte)
}

// serve answers <route>/<o>/<from>/<to>, its segments parsed by its
// route: the range proof of the index entries and, as the value, the
// settled records they name.
func (x recordIndex[O]) serve(t *trie.Trie, o O, from, to int64) (*abci.QueryResponse, error) {
	first, last := x.bounds(o, from, to)
	p, err := proveRange(t, first, last)
	if err != nil {
		return nil, err
	}
	var recs []ledger.SettledRecord
	for i, k := range p.Keys {
		if len(k) != len(first) || string(k[:34]) != string(first[:34]) || string(k) > string(last) {
			continue // the successor entry
		}
		payer, d, err := x.locate(o, k, p.Values[i])
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

// verify checks that r's proof covers exactly the owner's index range
// From..To under root and that its records are exactly the ones the
// entries name, in order: each belongs to the owner and hashes to the
// value proven at its own key. The range comes from r's request fields,
// never from the proof.
func (x recordIndex[O]) verify(root []byte, r RecordSpan[O]) error {
	first, last := x.bounds(r.Owner, r.From, r.To)
	keys, values, err := VerifyRange(root, first, last, r.Proof)
	if err != nil {
		return err
	}
	if len(keys) != len(r.Records) {
		return fmt.Errorf("%w: %d records listed, the proven index holds %d", ErrRecordMismatch, len(r.Records), len(keys))
	}
	for i, sr := range r.Records {
		if o := x.owner(&sr.Record); o != r.Owner {
			return fmt.Errorf("%w: record %d belongs to %s, not %s", ErrForeignRecord, i, o, r.Owner)
		}
		enc, err := cborx.Marshal(sr)
		if err != nil {
			return fmt.Errorf("%w: record %d: %w", ErrRecordMismatch, i, err)
		}
		key, value := x.entry(sr, ledger.RecordIndexValue(enc))
		if string(keys[i]) != string(key) || string(values[i]) != string(value) {
			return fmt.Errorf("%w: record %d (height %d, request %s) is not the one proven at index entry %x",
				ErrRecordMismatch, i, sr.Height, sr.Record.RequestDigest, keys[i])
		}
	}
	return nil
}
