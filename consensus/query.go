package consensus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// Query paths. Raw paths return the canonical CBOR state value (empty when
// absent) and one proof op; computed paths return JSON and one proof op
// per state key that went into it.
//
//	account/<hex>                 Account            (raw)
//	validator/<operator hex>      Validator          (raw)
//	provider/<machine hex>        Provider           (raw)
//	peer/<libp2p peer ID>         machine ID bytes   (raw; the registration of a peer)
//	escrow/<payer hex>/<settler hex> Escrow          (raw)
//	record/<payer hex>/<req hex>  SettledRecord      (raw)
//	proposal/<id>                 Proposal           (raw)
//	tally/<machine hex>/<hour>    HourTally          (raw)
//	name/<model name>             NameRecord         (raw)
//	params                        Params             (raw)
//	meta                          ChainMeta          (the state's, with the block's height and
//	                                                  time filled in: the proof op proves the
//	                                                  state's value; the height and time are
//	                                                  the block header's)
//	standing/<machine hex>        Standing           (JSON)
//	validators                    []Validator        (JSON, at most MaxListed)
//	records/<payer hex>           []SettledRecord    (JSON, at most MaxListed)
//	names                         []NameRecord       (JSON, at most MaxListed, in name order)
//	recordrange/<payer hex>/<from>/<to>
//	                              []SettledRecord    (CBOR; one RangeProofOpType op over
//	                                                  the KeyRecordIndex range, see RecordRange)
//	providerrange/<machine hex>/<from>/<to>
//	                              []SettledRecord    (CBOR; one RangeProofOpType op over the
//	                                                  KeyProviderRecordIndex range, see ProviderRecordRange)
//	escrows/<payer hex>           []Escrow           (JSON, at most MaxListed; one per settler)
//	stream/<id hex>               Stream             (raw; open or closed)
//	streams/<payer hex>           []Stream           (JSON, at most MaxListed; the payer's open
//	                                                  streams in ID order, each index entry and
//	                                                  stream proven)
//	plan/<id hex>                 Plan               (raw; open or decided)
//	plans/<payer hex>             []Plan             (JSON, at most MaxListed; the payer's
//	                                                  undecided plans in ID order, proven)
//	dispute/<id hex>              Dispute            (raw)
//	disputeevidence/<id hex>      DisputeEvidence    (raw; what a committee member re-executes)
//	disputes                      []Dispute          (JSON, at most MaxListed, in ID order)
//	activedisputes                []Dispute          (JSON; the unresolved ones, in opening order)
//	modelholders/<model hex>      ModelHolders       (raw; validators that declared the weights)
//	supply                        Supply             (raw; the burned total)
const MaxListed = 1000

// Query answers a query at the requested height (0 = last committed).
func (a *App) Query(_ context.Context, req *abci.QueryRequest) (*abci.QueryResponse, error) {
	if req.Path == SnapshotsQuery {
		newest, _ := a.l.NewestSnapshot()
		return &abci.QueryResponse{Value: []byte(strconv.FormatInt(newest, 10)), Height: a.l.Height()}, nil
	}
	var resp *abci.QueryResponse
	height := req.Height
	err := a.l.ViewAt(req.Height, func(t *trie.Trie, at ledger.Stamp) error {
		height = at.Height
		var err error
		resp, err = query(t, at, req.Path)
		return err
	})
	if err != nil {
		return &abci.QueryResponse{Code: uint32(ledger.CodeOf(err)), Codespace: "tenzro", Log: err.Error(), Height: height}, nil
	}
	resp.Height = height
	return resp, nil
}

// recorder is a read-only kv that remembers the keys read, of the state
// committed at the block at.
type recorder struct {
	kv   *ledger.TrieKV
	at   ledger.Stamp
	keys [][]byte
	seen map[string]bool
}

func (r *recorder) Get(key []byte) ([]byte, error) {
	if !r.seen[string(key)] {
		r.seen[string(key)] = true
		r.keys = append(r.keys, key)
	}
	return r.kv.Get(key)
}
func (r *recorder) Set([]byte, []byte) {}
func (r *recorder) Del([]byte)         {}

// query answers path from its route. The one error-code rule lives here
// and in the route builders: a path that names no route, or whose
// segments do not parse, is CodeMalformed; every other error is the
// state's or the proof's.
func query(t *trie.Trie, at ledger.Stamp, path string) (*abci.QueryResponse, error) {
	parts := strings.Split(path, "/")
	r, ok := routes[parts[0]]
	if !ok || len(parts)-1 != r.args {
		return nil, reject(ledger.CodeMalformed, "unknown query path %q", path)
	}
	return r.serve(t, at, parts[1:])
}

// rawKey answers the canonical value at key with its proof.
func rawKey(t *trie.Trie, key []byte) (*abci.QueryResponse, error) {
	v, err := t.Get(key)
	if err != nil {
		return nil, fmt.Errorf("consensus: read %q: %w", key, err)
	}
	op, err := proofOp(t, key)
	if err != nil {
		return nil, err
	}
	return &abci.QueryResponse{Key: key, Value: v, ProofOps: &cmtcrypto.ProofOps{Ops: []cmtcrypto.ProofOp{op}}}, nil
}

// computed runs f over a recording view of the state committed at the
// block at and proves every key it read.
func computed(t *trie.Trie, at ledger.Stamp, f func(*recorder) (any, error)) (*abci.QueryResponse, error) {
	r := &recorder{kv: ledger.NewTrieKV(t), at: at, seen: map[string]bool{}}
	v, err := f(r)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("consensus: encode query result: %w", err)
	}
	ops := make([]cmtcrypto.ProofOp, 0, len(r.keys))
	for _, k := range r.keys {
		op, err := proofOp(t, k)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return &abci.QueryResponse{Value: js, ProofOps: &cmtcrypto.ProofOps{Ops: ops}}, nil
}

// blockMeta answers the chain metadata with the height and time of the
// block at: the state keeps only genesis's (ledger.ChainMeta), so the value
// is re-encoded, and its one proof op proves the state's value.
func blockMeta(t *trie.Trie, at ledger.Stamp, _ []string) (*abci.QueryResponse, error) {
	res, err := rawKey(t, ledger.KeyMeta())
	if err != nil || len(res.Value) == 0 {
		return res, err
	}
	var m ledger.ChainMeta
	if err := cborx.UnmarshalCanonical(res.Value, ledger.MaxValueBytes, &m); err != nil {
		return nil, fmt.Errorf("consensus: chain metadata: %w", err)
	}
	m.Height, m.Time = at.Height, at.Time
	if res.Value, err = cborx.Marshal(m); err != nil {
		return nil, fmt.Errorf("consensus: encode chain metadata: %w", err)
	}
	return res, nil
}

// list decodes up to MaxListed values under prefix, reading each through r
// so it is proven.
func list[T any](t *trie.Trie, r *recorder, prefix []byte) ([]T, error) {
	nit, err := t.NodeIteratorWithPrefix(prefix)
	if err != nil {
		return nil, fmt.Errorf("consensus: iterate %q: %w", prefix, err)
	}
	it := trie.NewIterator(nit)
	var keys [][]byte
	for len(keys) < MaxListed && it.Next() {
		keys = append(keys, bytes.Clone(it.Key))
	}
	if it.Err != nil {
		return nil, fmt.Errorf("consensus: iterate %q: %w", prefix, it.Err)
	}
	out := make([]T, len(keys))
	for i, k := range keys {
		if _, err := ledger.Load(r, k, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func badPath(err error) error {
	if err == nil {
		return nil
	}
	return reject(ledger.CodeMalformed, "query path: %v", err)
}

// reject builds a *TxError.
func reject(c ledger.Code, format string, args ...any) error {
	return &ledger.TxError{Code: c, Msg: fmt.Sprintf(format, args...)}
}
