package gatewayapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// DisputeEvidenceParams are tenzro_getDisputeEvidence's parameters: the
// request digest of a paid answer (a response's
// tenzro.payment.request_digest, or tenzro_listRecentRequests').
type DisputeEvidenceParams struct {
	Request string `json:"request"`
}

// DisputeEvidenceResult is tenzro_getDisputeEvidence's result: Evidence is
// exactly the file `tenzrod tx dispute open --evidence` reads, for the
// record of (Payer, RequestDigest). Settled says whether that record is on
// the chain yet (only a settled record can be disputed); once it is,
// SettledHeight is its height and Price what the buyer paid (a dispute's
// least bond, ledger.DisputeBond, scales with it). All three are absent
// without a chain. Problem, when set, is why the chain would refuse the
// evidence against the settled record (its own check, run here first).
type DisputeEvidenceResult struct {
	Payer         string                 `json:"payer"`
	RequestDigest string                 `json:"request_digest"`
	Provider      string                 `json:"provider"`
	Model         string                 `json:"model"`
	Settled       *bool                  `json:"settled,omitempty"`
	SettledHeight int64                  `json:"settled_height,omitempty"`
	Price         uint64                 `json:"price,omitempty"`
	Problem       string                 `json:"problem,omitempty"`
	Evidence      ledger.DisputeEvidence `json:"evidence"`
}

// Evidence contributes tenzro_getDisputeEvidence. The evidence of a
// request is its buyer's: it holds the buyer's prompt, so it is read only
// with that buyer's bearer token or the operator's admin token, like a
// session.
type Evidence struct {
	Store   *store.Store
	Chain   *consensus.Node // nil without a chain
	Callers Callers
}

// RegisterRPC contributes tenzro_getDisputeEvidence.
func (a Evidence) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_getDisputeEvidence", func(ctx context.Context, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[DisputeEvidenceParams](raw)
		if err != nil {
			return nil, err
		}
		digest, herr := hex.DecodeString(p.Request)
		if herr != nil || len(digest) != 32 {
			return nil, rpc.InvalidParams("request: %q is not a 64-hex-digit request digest", p.Request)
		}
		admin, payer, err := a.Callers.Caller(rpc.Header(ctx))
		if err != nil {
			return nil, rpc.Unauthorized("tenzro_getDisputeEvidence: %v: the request's buyer token or the operator's admin token", err)
		}
		notKept := rpc.InvalidParams("request: this node kept no dispute evidence for request %s (only for paid optimistic answers it routed)", p.Request)
		e, err := a.Store.GetEvidence(digest)
		if errors.Is(err, store.ErrNotFound) {
			return nil, notKept
		}
		if err != nil {
			return nil, err
		}
		// Another buyer's request is answered as none: a token proves
		// nothing about requests that are not its own.
		if !admin && e.Payer != payer {
			return nil, notKept
		}
		env, meta, err := a.Store.GetReceipt(e.Nonce)
		if err != nil {
			return nil, err
		}
		res := DisputeEvidenceResult{Payer: e.Payer, RequestDigest: p.Request, Provider: meta.Provider, Model: meta.Model,
			Evidence: ledger.DisputeEvidence{Receipt: env, Proofs: e.Proofs, Tokens: e.Tokens, Input: e.Input}}
		a.settled(ctx, &res, [32]byte(digest))
		return res, nil
	})
}

// settled fills in whether the chain settled the record yet and, if it
// did, whether the chain would take the evidence; a chain that cannot
// answer leaves it unknown rather than failing the read.
func (a Evidence) settled(ctx context.Context, res *DisputeEvidenceResult, digest terms.Hash32) {
	if a.Chain == nil {
		return
	}
	payer, err := terms.ParseAccountID(res.Payer)
	if err != nil {
		return
	}
	rec, ok, err := a.Chain.Record(ctx, payer, digest)
	if err != nil {
		return
	}
	res.Settled = &ok
	if ok {
		res.SettledHeight, res.Price = rec.Height, rec.Record.Price
		if err := ledger.CheckRecordEvidence(&rec, &res.Evidence); err != nil {
			res.Problem = err.Error()
		}
	}
}
