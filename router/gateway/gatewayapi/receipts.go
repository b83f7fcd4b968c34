package gatewayapi

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// ReceiptResult is what tenzro_getReceipt and tenzro_verifyReceipt return.
type ReceiptResult struct {
	Envelope []byte               `json:"envelope"` // base64
	Stored   *store.ReceiptMeta   `json:"stored,omitempty"`
	Valid    bool                 `json:"valid"`
	Problem  string               `json:"problem,omitempty"`
	PinnedTo string               `json:"pinned_to,omitempty"` // the machine the provider's announcement pins
	Receipt  *gateway.ReceiptView `json:"receipt,omitempty"`
}

// Receipts is the routing side's part of the API: router metrics and
// the receipts this node received, checked against its pins.
type Receipts struct {
	Gateway *gateway.Gateway // nil on a provider
	Store   *store.Store
	Pins    gossip.Pins // the machine each provider's announcements pin
	Clock   clock.Clock
}

// RegisterRPC contributes the receipt and router-metrics methods.
func (n Receipts) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_getRouterMetrics", func(context.Context, json.RawMessage) (any, error) {
		if n.Gateway == nil {
			return nil, rpc.Unavailable("this node is a provider; it does not route requests")
		}
		return n.Gateway.Snapshot(), nil
	})
	s.Register("tenzro_getReceipt", func(_ context.Context, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[struct {
			Nonce string `json:"nonce"`
		}](raw)
		if err != nil {
			return nil, err
		}
		nonce, herr := hex.DecodeString(p.Nonce)
		if herr != nil || len(nonce) != receipt.NonceSize {
			return nil, rpc.InvalidParams("nonce: %q is not %d hex bytes", p.Nonce, receipt.NonceSize)
		}
		env, meta, gerr := n.Store.GetReceipt(nonce)
		if errors.Is(gerr, store.ErrNotFound) {
			return nil, rpc.InvalidParams("no receipt with nonce %s at this node", p.Nonce)
		}
		if gerr != nil {
			return nil, gerr
		}
		res := n.verifyReceipt(env, time.UnixMilli(meta.TimeMs))
		res.Stored = &meta
		return res, nil
	})
	s.Register("tenzro_verifyReceipt", func(_ context.Context, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[struct {
			Envelope string `json:"envelope"`
		}](raw)
		if err != nil {
			return nil, err
		}
		env, derr := base64.StdEncoding.DecodeString(p.Envelope)
		if derr != nil {
			if env, derr = hex.DecodeString(p.Envelope); derr != nil {
				return nil, rpc.InvalidParams("envelope: neither base64 nor hex")
			}
		}
		return n.verifyReceipt(env, n.Clock.Now()), nil
	})
}

// verifyReceipt checks an envelope against the machine this node has
// pinned for the receipt's provider, at time at (when it was received).
func (n Receipts) verifyReceipt(env []byte, at time.Time) ReceiptResult {
	res := ReceiptResult{Envelope: env}
	_, r, err := receipt.Parse(env)
	if err != nil {
		res.Problem = err.Error()
		return res
	}
	res.Receipt = gateway.ViewReceipt(r)
	pid, err := peer.IDFromBytes(r.ProviderPeer)
	if err != nil {
		res.Problem = "provider peer: " + err.Error()
		return res
	}
	pinned, ok := n.Pins.Lookup(pid)
	if !ok {
		res.Problem = "this node has no machine pinned for provider " + pid.String()
		return res
	}
	res.PinnedTo = pinned.String()
	if _, err := receipt.Verify(env, identity.MachineID(pinned), at); err != nil {
		res.Problem = err.Error()
		return res
	}
	res.Valid = true
	return res
}
