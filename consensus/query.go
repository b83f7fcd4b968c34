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
	"github.com/tenzrod/tenzrod/receipts/identity"
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
//	meta                          ChainMeta          (raw)
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
	var resp *abci.QueryResponse
	height := req.Height
	err := a.l.View(req.Height, func(t *trie.Trie, h int64) error {
		height = h
		var err error
		resp, err = query(t, req.Path)
		return err
	})
	if err != nil {
		return &abci.QueryResponse{Code: uint32(ledger.CodeOf(err)), Codespace: "tenzro", Log: err.Error(), Height: height}, nil
	}
	resp.Height = height
	return resp, nil
}

// recorder is a read-only kv that remembers the keys read.
type recorder struct {
	kv   *ledger.TrieKV
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

func query(t *trie.Trie, path string) (*abci.QueryResponse, error) {
	parts := strings.Split(path, "/")
	rawKey := func(key []byte, err error) (*abci.QueryResponse, error) {
		if err != nil {
			return nil, err
		}
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
	switch {
	case len(parts) == 2 && parts[0] == "account":
		return rawKey(withAccount(parts[1], ledger.KeyAccount))
	case len(parts) == 2 && parts[0] == "validator":
		return rawKey(withAccount(parts[1], ledger.KeyValidator))
	case len(parts) == 3 && parts[0] == "escrow":
		p, err := ledger.ParseAccountID(parts[1])
		st, err2 := ledger.ParseAccountID(parts[2])
		if err == nil {
			err = err2
		}
		return rawKey(ledger.KeyEscrow(p, st), badPath(err))
	case len(parts) == 2 && parts[0] == "provider":
		m, err := parseMachine(parts[1])
		return rawKey(ledger.KeyProvider(m), err)
	case len(parts) == 2 && parts[0] == "peer":
		return rawKey(ledger.KeyPeer(parts[1]), nil)
	case len(parts) == 3 && parts[0] == "record":
		p, err := ledger.ParseAccountID(parts[1])
		d, err2 := parseHash(parts[2])
		if err == nil {
			err = err2
		}
		return rawKey(ledger.KeyRecord(p, d), err)
	case len(parts) == 2 && parts[0] == "proposal":
		id, err := strconv.ParseUint(parts[1], 10, 64)
		return rawKey(ledger.KeyProposal(id), badPath(err))
	case len(parts) == 3 && parts[0] == "tally":
		m, err := parseMachine(parts[1])
		h, err2 := strconv.ParseUint(parts[2], 10, 64)
		if err == nil {
			err = badPath(err2)
		}
		return rawKey(ledger.KeyHourTally(m, h), err)
	case len(parts) == 2 && parts[0] == "name":
		return rawKey(ledger.KeyName(parts[1]), badPath(ledger.CheckName(parts[1])))
	case path == "names":
		return computed(t, func(r *recorder) (any, error) { return list[ledger.NameRecord](t, r, ledger.NamePrefix()) })
	case path == "params":
		return rawKey(ledger.KeyParams(), nil)
	case path == "meta":
		return rawKey(ledger.KeyMeta(), nil)
	case len(parts) == 2 && parts[0] == "standing":
		m, err := parseMachine(parts[1])
		if err != nil {
			return nil, err
		}
		return computed(t, func(r *recorder) (any, error) { return ledger.ComputeStanding(r, m) })
	case path == "validators":
		return computed(t, func(r *recorder) (any, error) { return list[ledger.Validator](t, r, []byte("v/")) })
	case len(parts) == 4 && parts[0] == "recordrange":
		return queryRecordRange(t, parts[1], parts[2], parts[3])
	case len(parts) == 4 && parts[0] == "providerrange":
		return queryProviderRange(t, parts[1], parts[2], parts[3])
	case len(parts) == 2 && parts[0] == "escrows":
		p, err := ledger.ParseAccountID(parts[1])
		if err != nil {
			return nil, badPath(err)
		}
		first, _ := ledger.EscrowRange(p)
		return computed(t, func(r *recorder) (any, error) { return list[ledger.Escrow](t, r, first[:34]) })
	case len(parts) == 2 && parts[0] == "stream":
		id, err := parseHash(parts[1])
		return rawKey(ledger.KeyStream(id), badPath(err))
	case len(parts) == 2 && parts[0] == "streams":
		p, err := ledger.ParseAccountID(parts[1])
		if err != nil {
			return nil, badPath(err)
		}
		return computed(t, func(r *recorder) (any, error) { return openStreams(t, r, p) })
	case len(parts) == 2 && parts[0] == "plan":
		id, err := parseHash(parts[1])
		return rawKey(ledger.KeyPlan(id), badPath(err))
	case len(parts) == 2 && parts[0] == "plans":
		p, err := ledger.ParseAccountID(parts[1])
		if err != nil {
			return nil, badPath(err)
		}
		return computed(t, func(r *recorder) (any, error) { return openPlans(t, r, p) })
	case len(parts) == 2 && parts[0] == "dispute":
		id, err := parseHash(parts[1])
		return rawKey(ledger.KeyDispute(id), badPath(err))
	case len(parts) == 2 && parts[0] == "disputeevidence":
		id, err := parseHash(parts[1])
		return rawKey(ledger.KeyDisputeEvidence(id), badPath(err))
	case path == "activedisputes":
		return computed(t, func(r *recorder) (any, error) { return activeDisputes(r) })
	case path == "disputes":
		return computed(t, func(r *recorder) (any, error) { return list[ledger.Dispute](t, r, ledger.DisputePrefix()) })
	case len(parts) == 2 && parts[0] == "modelholders":
		id, err := parseHash(parts[1])
		return rawKey(ledger.KeyModelHolders(id), badPath(err))
	case path == "supply":
		return rawKey(ledger.KeySupply(), nil)
	case len(parts) == 2 && parts[0] == "records":
		p, err := ledger.ParseAccountID(parts[1])
		if err != nil {
			return nil, badPath(err)
		}
		return computed(t, func(r *recorder) (any, error) {
			return list[ledger.SettledRecord](t, r, ledger.KeyRecord(p, ledger.Hash32{})[:34])
		})
	}
	return nil, reject(ledger.CodeMalformed, "unknown query path %q", path)
}

// computed runs f over a recording view and proves every key it read.
func computed(t *trie.Trie, f func(*recorder) (any, error)) (*abci.QueryResponse, error) {
	r := &recorder{kv: ledger.NewTrieKV(t), seen: map[string]bool{}}
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

func withAccount(s string, key func(ledger.AccountID) []byte) ([]byte, error) {
	a, err := ledger.ParseAccountID(s)
	if err != nil {
		return nil, badPath(err)
	}
	return key(a), nil
}

func parseMachine(s string) (identity.MachineID, error) {
	m, err := identity.ParseMachineID(s)
	return m, badPath(err)
}

func parseHash(s string) (ledger.Hash32, error) { return ledger.ParseHash(s) }

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
