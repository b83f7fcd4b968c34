package chainapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math/bits"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// PaymentsParams are tenzro_getPayments' parameters: exactly one of Payer
// (an account) and Provider (a machine ID), and an optional height range.
type PaymentsParams struct {
	Payer    string `json:"payer,omitempty"`    // 64 hex digits
	Provider string `json:"provider,omitempty"` // hex machine ID
	From     int64  `json:"from,omitempty"`     // default: To - (DefaultPaymentSpan - 1), at least 1
	To       int64  `json:"to,omitempty"`       // default: the latest committed height
}

// Height ranges of tenzro_getPayments.
const (
	// DefaultPaymentSpan is the number of blocks listed when From is absent.
	DefaultPaymentSpan = 1000
	// MaxPaymentSpan bounds the blocks of one call: the answer carries
	// every record's receipt from the chain, a few KB each.
	MaxPaymentSpan = 100_000
)

// PaymentView is one settled payment record.
type PaymentView struct {
	Payer         string `json:"payer"`
	Provider      string `json:"provider"`
	RequestDigest string `json:"request_digest"`
	Price         uint64 `json:"price"` // micro-units debited from the payer's escrow
	Units         uint64 `json:"units"`
	Settler       string `json:"settler"`
	Height        int64  `json:"height"` // of the block that settled it
	Fee           uint64 `json:"fee"`    // taken from the provider's credit
	TxHash        string `json:"tx_hash"`
	// Reversed is what a conviction paid back to the payer, at
	// ReversedHeight (the whole price; absent for a record standing).
	Reversed       uint64 `json:"reversed,omitempty"`
	ReversedHeight int64  `json:"reversed_height,omitempty"`
}

// PaymentsView is tenzro_getPayments' result: every record settled for
// the payer (or to the provider) at heights From..To, in index order
// (by height), and their sums.
type PaymentsView struct {
	Payer    string        `json:"payer,omitempty"`
	Provider string        `json:"provider,omitempty"`
	From     int64         `json:"from"`
	To       int64         `json:"to"`
	Height   int64         `json:"height"` // the state the answer was read from
	Records  []PaymentView `json:"records"`
	Count    int           `json:"count"`
	Total    uint64        `json:"total"` // Σ price
	Fees     uint64        `json:"fees"`  // Σ fee
}

// Payments is the chain's payment visibility: settled records by payer
// or by provider.
type Payments struct{ Node *consensus.Node }

// RegisterRPC contributes tenzro_getPayments.
func (a Payments) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_getPayments", func(ctx context.Context, raw json.RawMessage) (any, error) {
		if a.Node == nil || a.Node.Client() == nil {
			return nil, rpc.Unavailable("this node runs no chain ([chain] enabled = false)")
		}
		res, err := a.payments(ctx, raw)
		return res, chainError(err)
	})
}

func (a Payments) payments(ctx context.Context, raw json.RawMessage) (*PaymentsView, error) {
	p, err := rpc.Params[PaymentsParams](raw)
	if err != nil {
		return nil, err
	}
	if (p.Payer == "") == (p.Provider == "") {
		return nil, rpc.InvalidParams("payer, provider: give exactly one (a payer account or a provider machine ID)")
	}
	latest := a.Node.App().Height()
	from, to, err := paymentRange(p.From, p.To, latest)
	if err != nil {
		return nil, err
	}
	out := &PaymentsView{From: from, To: to, Records: []PaymentView{}}
	var recs []ledger.SettledRecord
	if p.Payer != "" {
		payer, err := terms.ParseAccountID(p.Payer)
		if err != nil {
			return nil, rpc.InvalidParams("payer: %q is not a 64-hex-digit account ID", p.Payer)
		}
		out.Payer = payer.String()
		if to >= from {
			rr, err := a.Node.RecordRange(ctx, payer, from, to, 0)
			if err != nil {
				return nil, err
			}
			recs, out.Height = rr.Records, rr.Height
		}
	} else {
		m, err := identity.ParseMachineID(p.Provider)
		if err != nil {
			return nil, rpc.InvalidParams("provider: %v", err)
		}
		out.Provider = m.String()
		if to >= from {
			pr, err := a.Node.ProviderRecordRange(ctx, m, from, to, 0)
			if err != nil {
				return nil, err
			}
			recs, out.Height = pr.Records, pr.Height
		}
	}
	if out.Height == 0 {
		out.Height = latest
	}
	for _, sr := range recs {
		r := &sr.Record
		var c1, c2 uint64
		out.Total, c1 = bits.Add64(out.Total, r.Price, 0)
		out.Fees, c2 = bits.Add64(out.Fees, sr.Fee, 0)
		if c1|c2 != 0 {
			return nil, fmt.Errorf("chainapi: payments: the sum of %d records overflows 64 bits", len(recs))
		}
		out.Records = append(out.Records, PaymentView{Payer: r.Payer.String(), Provider: r.Provider.String(),
			RequestDigest: r.RequestDigest.String(), Price: r.Price, Units: r.Units, Settler: r.Settler.String(),
			Height: sr.Height, Fee: sr.Fee, TxHash: sr.TxHash.String(), Reversed: sr.Reversed, ReversedHeight: sr.ReversedHeight})
	}
	out.Count = len(out.Records)
	return out, nil
}

// paymentRange resolves tenzro_getPayments' heights against the latest
// committed one. A chain with no block yet gives the empty range 1..0.
func paymentRange(from, to, latest int64) (int64, int64, error) {
	switch {
	case from < 0:
		return 0, 0, rpc.InvalidParams("from: height %d is negative", from)
	case to < 0:
		return 0, 0, rpc.InvalidParams("to: height %d is negative", to)
	case to > latest:
		return 0, 0, rpc.InvalidParams("to: height %d is beyond the latest committed height %d", to, latest)
	}
	if to == 0 {
		to = latest
	}
	if from == 0 {
		from = max(1, to-(DefaultPaymentSpan-1))
	}
	switch {
	case latest < 1:
		return 1, 0, nil
	case from > to:
		return 0, 0, rpc.InvalidParams("from: height %d is above to (%d)", from, to)
	case to-from >= MaxPaymentSpan:
		return 0, 0, rpc.InvalidParams("from, to: %d..%d spans %d blocks, limit %d", from, to, to-from+1, MaxPaymentSpan)
	}
	return from, to, nil
}
