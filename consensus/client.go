package consensus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"
	"github.com/cometbft/cometbft/mempool"
	"github.com/cometbft/cometbft/rpc/client"
	"github.com/cometbft/cometbft/rpc/client/local"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ErrNotStarted is returned by client helpers before Start.
var ErrNotStarted = errors.New("consensus: node not started")

// QueryResult is a query answer with its proofs (ProofOpType ops, checked
// against the app hash in the header of Height+1).
type QueryResult struct {
	Height int64
	Key    []byte
	Value  []byte
	Proof  []cmtcrypto.ProofOp
}

// TxResult is where and how a transaction ended up in a block.
type TxResult struct {
	Hash   [32]byte
	Height int64
	Code   ledger.Code
	Log    string
	Data   []byte // a settlement's SettleReport (canonical CBOR); see DecodeSettleReport
}

func (n *Node) rpc() (*local.Local, error) {
	c := n.Client()
	if c == nil {
		return nil, ErrNotStarted
	}
	return c, nil
}

// BroadcastTx submits a signed transaction to the mempool and returns its
// hash; a CheckTx rejection is returned as a *TxError with its code.
func (n *Node) BroadcastTx(ctx context.Context, raw []byte) ([32]byte, error) {
	c, err := n.rpc()
	if err != nil {
		return [32]byte{}, err
	}
	res, err := c.BroadcastTxSync(ctx, raw)
	var invalid mempool.ErrInvalidTx
	if errors.As(err, &invalid) {
		c := ledger.Code(invalid.Code)
		return [32]byte{}, &ledger.TxError{Code: c, Msg: strings.TrimPrefix(invalid.Log, "ledger: "+c.String()+": ")}
	}
	if err != nil {
		return [32]byte{}, fmt.Errorf("consensus: broadcast: %w", err)
	}
	if res.Code != 0 {
		return [32]byte{}, &ledger.TxError{Code: ledger.Code(res.Code), Msg: res.Log}
	}
	return ledger.TxHash(raw), nil
}

// CatchingUp reports whether the node is still block-syncing (it then
// refuses transactions).
func (n *Node) CatchingUp(ctx context.Context) (bool, error) {
	c, err := n.rpc()
	if err != nil {
		return false, err
	}
	st, err := c.Status(ctx)
	if err != nil {
		return false, fmt.Errorf("consensus: status: %w", err)
	}
	return st.SyncInfo.CatchingUp, nil
}

// WaitTx polls until the transaction is in a committed block or ctx ends.
func (n *Node) WaitTx(ctx context.Context, hash [32]byte) (TxResult, error) {
	c, err := n.rpc()
	if err != nil {
		return TxResult{}, err
	}
	for {
		res, err := c.Tx(ctx, hash[:], false)
		if err == nil {
			return TxResult{Hash: hash, Height: res.Height, Code: ledger.Code(res.TxResult.Code), Log: res.TxResult.Log, Data: res.TxResult.Data}, nil
		}
		select {
		case <-ctx.Done():
			return TxResult{}, fmt.Errorf("consensus: wait for tx %x: %w (last: %w)", hash[:8], ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Query runs an ABCI query (paths in query.go) at height (0 = latest).
func (n *Node) Query(ctx context.Context, path string, height int64) (QueryResult, error) {
	c, err := n.rpc()
	if err != nil {
		return QueryResult{}, err
	}
	res, err := c.ABCIQueryWithOptions(ctx, path, nil, client.ABCIQueryOptions{Height: height, Prove: true})
	if err != nil {
		return QueryResult{}, fmt.Errorf("consensus: query %s: %w", path, err)
	}
	r := res.Response
	if r.Code != 0 {
		return QueryResult{}, &ledger.TxError{Code: ledger.Code(r.Code), Msg: r.Log}
	}
	out := QueryResult{Height: r.Height, Key: r.Key, Value: r.Value}
	if r.ProofOps != nil {
		out.Proof = r.ProofOps.Ops
	}
	return out, nil
}

// queryCBOR decodes a raw-key query into v; it reports false when absent.
func (n *Node) queryCBOR(ctx context.Context, path string, v any) (bool, error) {
	r, err := n.Query(ctx, path, 0)
	if err != nil || len(r.Value) == 0 {
		return false, err
	}
	if err := cborx.UnmarshalCanonical(r.Value, ledger.MaxValueBytes, v); err != nil {
		return false, fmt.Errorf("consensus: query %s: %w", path, err)
	}
	return true, nil
}

// Account returns an account (zero and false when it does not exist).
func (n *Node) Account(ctx context.Context, id terms.AccountID) (ledger.Account, bool, error) {
	var a ledger.Account
	ok, err := n.queryCBOR(ctx, "account/"+id.String(), &a)
	return a, ok, err
}

// Provider returns a provider registration.
func (n *Node) Provider(ctx context.Context, m identity.MachineID) (ledger.Provider, bool, error) {
	var p ledger.Provider
	ok, err := n.queryCBOR(ctx, "provider/"+m.String(), &p)
	return p, ok, err
}

// ProviderByPeer returns the machine registered for a libp2p peer ID.
func (n *Node) ProviderByPeer(ctx context.Context, peerID string) (identity.MachineID, bool, error) {
	var m identity.MachineID
	r, err := n.Query(ctx, "peer/"+peerID, 0)
	if err != nil || len(r.Value) == 0 {
		return m, false, err
	}
	if len(r.Value) != len(m) {
		return m, false, fmt.Errorf("consensus: peer %s: machine ID of %d bytes", peerID, len(r.Value))
	}
	copy(m[:], r.Value)
	return m, true, nil
}

// Meta returns the chain metadata of the last committed block.
func (n *Node) Meta(ctx context.Context) (ledger.ChainMeta, error) {
	var m ledger.ChainMeta
	_, err := n.queryCBOR(ctx, "meta", &m)
	return m, err
}

// SLAHour is the SLA hour index of the last committed block (see Params.HourSeconds).
func SLAHour(m ledger.ChainMeta, p ledger.Params) uint64 {
	return ledger.HourOf(m.Time, m.GenesisTime, p.HourSeconds)
}

// Escrow returns the escrow of (payer, settler).
func (n *Node) Escrow(ctx context.Context, payer, settler terms.AccountID) (ledger.Escrow, bool, error) {
	var e ledger.Escrow
	ok, err := n.queryCBOR(ctx, "escrow/"+payer.String()+"/"+settler.String(), &e)
	return e, ok, err
}

// Escrows returns payer's escrows, one per settler (at most MaxListed).
func (n *Node) Escrows(ctx context.Context, payer terms.AccountID) ([]ledger.Escrow, error) {
	r, err := n.Query(ctx, "escrows/"+payer.String(), 0)
	if err != nil {
		return nil, err
	}
	var es []ledger.Escrow
	if err := json.Unmarshal(r.Value, &es); err != nil {
		return nil, fmt.Errorf("consensus: escrows of %s: %w", payer, err)
	}
	return es, nil
}

// Stream returns the stream escrow with this ID, open or closed.
func (n *Node) Stream(ctx context.Context, id terms.Hash32) (ledger.Stream, bool, error) {
	var s ledger.Stream
	ok, err := n.queryCBOR(ctx, "stream/"+id.String(), &s)
	return s, ok, err
}

// Streams returns payer's open stream escrows in ID order (at most
// MaxListed).
func (n *Node) Streams(ctx context.Context, payer terms.AccountID) ([]ledger.Stream, error) {
	r, err := n.Query(ctx, "streams/"+payer.String(), 0)
	if err != nil {
		return nil, err
	}
	var ss []ledger.Stream
	if err := json.Unmarshal(r.Value, &ss); err != nil {
		return nil, fmt.Errorf("consensus: streams of %s: %w", payer, err)
	}
	return ss, nil
}

// Params returns the governed parameters.
func (n *Node) Params(ctx context.Context) (ledger.Params, error) {
	var p ledger.Params
	_, err := n.queryCBOR(ctx, "params", &p)
	return p, err
}

// Standing returns a provider's standing and its inputs at height (0 = latest).
func (n *Node) Standing(ctx context.Context, m identity.MachineID, height int64) (ledger.Standing, error) {
	r, err := n.Query(ctx, "standing/"+m.String(), height)
	if err != nil {
		return ledger.Standing{}, err
	}
	var s ledger.Standing
	if err := json.Unmarshal(r.Value, &s); err != nil {
		return ledger.Standing{}, fmt.Errorf("consensus: standing: %w", err)
	}
	return s, nil
}

// Validators lists the validators in state.
func (n *Node) Validators(ctx context.Context) ([]ledger.Validator, error) {
	r, err := n.Query(ctx, "validators", 0)
	if err != nil {
		return nil, err
	}
	var vs []ledger.Validator
	if err := json.Unmarshal(r.Value, &vs); err != nil {
		return nil, fmt.Errorf("consensus: validators: %w", err)
	}
	return vs, nil
}
