package chainapi

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/cometbft/cometbft/mempool"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/evidence"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// AccountParams are tenzro_getAccount's parameters.
type AccountParams struct {
	Account string `json:"account"` // 64 hex digits
}

// AccountView is tenzro_getAccount's result.
type AccountView struct {
	Account string `json:"account"`
	Exists  bool   `json:"exists"`
	Balance uint64 `json:"balance"`
	Nonce   uint64 `json:"nonce"`
	Height  int64  `json:"height"`
	// Escrows are the account's spend escrows as payer, one per settler:
	// a buyer's balance at each gateway, falling with every paid call.
	Escrows []ledger.Escrow `json:"escrows"`
	// Streams are the account's open stream escrows as payer (standby
	// paid by block time), in ID order.
	Streams []ledger.Stream `json:"streams"`
	// Plans are the account's undecided settlement plans as payer (a plan
	// whose legs are all on this chain is decided as it opens).
	Plans []ledger.Plan `json:"plans"`
}

// StandingParams are tenzro_getStanding's parameters.
type StandingParams struct {
	MachineID string `json:"machine_id"`
}

// SendTxParams are tenzro_sendTx's parameters.
type SendTxParams struct {
	Tx string `json:"tx"` // a signed transaction, standard base64
}

// TxParams are tenzro_getTx's parameters.
type TxParams struct {
	Hash string `json:"hash"` // 64 hex digits, as tenzro_sendTx returns it
}

// TxView is tenzro_sendTx's and tenzro_getTx's result.
type TxView struct {
	Hash   string `json:"hash"`
	Height int64  `json:"height,omitempty"` // 0: not yet in a block
	Code   uint32 `json:"code"`
	Result string `json:"result,omitempty"` // the code's name
	Log    string `json:"log,omitempty"`
	// Data is the applied transaction's result data in hex: a stream
	// open's stream ID, a settlement's SettleReport (canonical CBOR).
	Data string `json:"data,omitempty"`
}

// EvidenceParams are tenzro_getEvidencePack's parameters.
type EvidenceParams struct {
	Account    string `json:"account"`
	FromHeight int64  `json:"from_height"`
	ToHeight   int64  `json:"to_height"`
}

// maxEvidenceWait bounds how long an evidence export waits for the block
// that certifies its last height.
const maxEvidenceWait = 30 * time.Second

// chainHandler answers a method with the node's chain at hand.
type chainHandler func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error)

// chainMethod answers Unavailable on a node without a chain and maps the
// chain's errors to RPC errors.
func chainMethod(n *consensus.Node, h chainHandler) rpc.Handler {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		if n == nil || n.Client() == nil {
			return nil, rpc.Unavailable("this node runs no chain ([chain] enabled = false)")
		}
		res, err := h(ctx, n, raw)
		return res, chainError(err)
	}
}

// Chain is the chain's part of the API: queries with proofs and
// transactions, answered Unavailable on a node without a chain.
type Chain struct{ Node *consensus.Node }

// RegisterRPC contributes the chain methods.
func (a Chain) RegisterRPC(s rpc.Registry) {
	chain := func(h chainHandler) rpc.Handler { return chainMethod(a.Node, h) }
	s.Register("tenzro_getAccount", chain(func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		id, err := accountParam(raw)
		if err != nil {
			return nil, err
		}
		h := c.App().Height()
		a, ok, err := c.Account(ctx, id)
		if err != nil {
			return nil, err
		}
		es, err := c.Escrows(ctx, id)
		if err != nil {
			return nil, err
		}
		if es == nil {
			es = []ledger.Escrow{}
		}
		ss, err := c.Streams(ctx, id)
		if err != nil {
			return nil, err
		}
		if ss == nil {
			ss = []ledger.Stream{}
		}
		ps, err := c.Plans(ctx, id)
		if err != nil {
			return nil, err
		}
		if ps == nil {
			ps = []ledger.Plan{}
		}
		return AccountView{Account: id.String(), Exists: ok, Balance: a.Balance, Nonce: a.Nonce, Height: h, Escrows: es, Streams: ss, Plans: ps}, nil
	}))
	s.Register("tenzro_getStanding", chain(func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[StandingParams](raw)
		if err != nil {
			return nil, err
		}
		m, err := identity.ParseMachineID(p.MachineID)
		if err != nil {
			return nil, rpc.InvalidParams("machine_id: %v", err)
		}
		return c.Standing(ctx, m, 0)
	}))
	s.Register("tenzro_listValidators", chain(func(ctx context.Context, c *consensus.Node, _ json.RawMessage) (any, error) {
		return c.Validators(ctx)
	}))
	s.Register("tenzro_listEscrows", chain(func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		id, err := accountParam(raw)
		if err != nil {
			return nil, err
		}
		es, err := c.Escrows(ctx, id)
		if es == nil && err == nil {
			es = []ledger.Escrow{}
		}
		return map[string]any{"payer": id.String(), "escrows": es, "height": c.App().Height()}, err
	}))
	s.Register("tenzro_listModelNames", chain(func(ctx context.Context, c *consensus.Node, _ json.RawMessage) (any, error) {
		recs, err := c.NameRecords(ctx)
		if recs == nil && err == nil {
			recs = []ledger.NameRecord{}
		}
		return map[string]any{"names": recs}, err
	}))
	s.Register("tenzro_getParams", chain(func(ctx context.Context, c *consensus.Node, _ json.RawMessage) (any, error) {
		return c.Params(ctx)
	}))
	s.Register("tenzro_sendTx", chain(func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[SendTxParams](raw)
		if err != nil {
			return nil, err
		}
		tx, err := base64.StdEncoding.DecodeString(p.Tx)
		if err != nil || len(tx) == 0 {
			return nil, rpc.InvalidParams("tx: not a base64 transaction")
		}
		h, err := c.BroadcastTx(ctx, tx)
		if err != nil {
			return nil, err
		}
		return TxView{Hash: hex.EncodeToString(h[:]), Result: ledger.Code(0).String()}, nil
	}))
	s.Register("tenzro_getTx", chain(func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[TxParams](raw)
		if err != nil {
			return nil, err
		}
		b, err := hex.DecodeString(p.Hash)
		if err != nil || len(b) != 32 {
			return nil, rpc.InvalidParams("hash: %q is not 64 hex digits", p.Hash)
		}
		res, err := c.Client().Tx(ctx, b, false)
		if err != nil {
			return nil, rpc.InvalidParams("no committed transaction %s at this node: %v", p.Hash, err)
		}
		code := ledger.Code(res.TxResult.Code)
		return TxView{Hash: p.Hash, Height: res.Height, Code: uint32(code), Result: code.String(), Log: res.TxResult.Log,
			Data: hex.EncodeToString(res.TxResult.Data)}, nil
	}))
	s.Register("tenzro_getEvidencePack", chain(func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[EvidenceParams](raw)
		if err != nil {
			return nil, err
		}
		id, err := parseAccount(p.Account)
		if err != nil {
			return nil, err
		}
		if p.FromHeight < 1 || p.ToHeight < p.FromHeight {
			return nil, rpc.InvalidParams("heights %d..%d: want 1 <= from_height <= to_height", p.FromHeight, p.ToHeight)
		}
		ctx, cancel := context.WithTimeout(ctx, maxEvidenceWait)
		defer cancel()
		pack, err := evidence.Export(ctx, c, id, p.FromHeight, p.ToHeight)
		if errors.Is(err, evidence.ErrNotCommitted) {
			return nil, rpc.InvalidParams("%v", err)
		}
		if err != nil {
			return nil, err
		}
		return pack, nil // *Pack marshals as the pack file's JSON
	}))
}

// chainError maps a chain rejection to InvalidParams with its code as
// data, and a node still starting to Unavailable.
func chainError(err error) error {
	if err == nil {
		return nil
	}
	var re *rpc.Error
	if errors.As(err, &re) {
		return re
	}
	var te *ledger.TxError
	if errors.As(err, &te) {
		return &rpc.Error{Code: rpc.CodeInvalidParams, Message: err.Error(),
			Data: map[string]any{"code": uint32(te.Code), "result": te.Code.String()}}
	}
	if errors.Is(err, mempool.ErrTxInCache) {
		return rpc.InvalidParams("transaction already submitted")
	}
	if errors.Is(err, consensus.ErrNotStarted) {
		return rpc.Unavailable("%v", err)
	}
	return err
}

// accountParam reads AccountParams and parses its account, the one
// parameter of the account views.
func accountParam(raw json.RawMessage) (terms.AccountID, error) {
	p, err := rpc.Params[AccountParams](raw)
	if err != nil {
		return terms.AccountID{}, err
	}
	return parseAccount(p.Account)
}

// parseAccount parses an account parameter, refusing it as invalid params.
func parseAccount(s string) (terms.AccountID, error) {
	id, err := terms.ParseAccountID(s)
	if err != nil {
		return terms.AccountID{}, rpc.InvalidParams("account: %q is not a 64-hex-digit account ID", s)
	}
	return id, nil
}
