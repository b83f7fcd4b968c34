package consensus

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// RecordRange is a payer's records over a span of heights, proven by the
// payer index.
type RecordRange = RecordSpan[terms.AccountID]

// ProviderRecordRange is a provider machine's records, of every payer,
// over a span of heights, proven by the provider index: the provider's
// evidence of what it was paid.
type ProviderRecordRange = RecordSpan[identity.MachineID]

// payerIndex is the index of a payer's records (ledger.KeyRecordIndex),
// served at recordrange/<payer>/<from>/<to>. Its keys hold the request
// digest; the payer is the owner.
var payerIndex = recordIndex[terms.AccountID]{
	route:  "recordrange",
	bounds: ledger.RecordIndexRange,
	locate: func(payer terms.AccountID, k, _ []byte) (terms.AccountID, terms.Hash32, error) {
		var d terms.Hash32
		copy(d[:], k[42:])
		return payer, d, nil
	},
	owner: func(r *receipt.PaymentRecord) terms.AccountID { return r.Payer },
	entry: func(sr ledger.SettledRecord, h terms.Hash32) (key, value []byte) {
		return ledger.KeyRecordIndex(sr.Record.Payer, sr.Height, sr.Record.RequestDigest), h[:]
	},
}

// providerIndex is the index of the records paid to a machine
// (ledger.KeyProviderRecordIndex), served at
// providerrange/<machine>/<from>/<to>. Its values name the payer and the
// request digest.
var providerIndex = recordIndex[identity.MachineID]{
	route:  "providerrange",
	bounds: ledger.ProviderRecordIndexRange,
	locate: func(_ identity.MachineID, k, v []byte) (terms.AccountID, terms.Hash32, error) {
		var payer terms.AccountID
		var d terms.Hash32
		if len(v) != 96 {
			return payer, d, fmt.Errorf("consensus: provider index entry %x holds %d bytes, want 96", k, len(v))
		}
		copy(payer[:], v[:32])
		copy(d[:], v[32:64])
		return payer, d, nil
	},
	owner: func(r *receipt.PaymentRecord) identity.MachineID { return r.Provider },
	entry: func(sr ledger.SettledRecord, h terms.Hash32) (key, value []byte) {
		return ledger.KeyProviderRecordIndex(sr.Record.Provider, sr.Height, sr.Record.Payer, sr.Record.RequestDigest),
			ledger.ProviderRecordIndexValue(sr.Record.Payer, sr.Record.RequestDigest, h)
	},
}

// RecordRange returns payer's records settled at heights from..to as of
// the state after block height (0 = latest committed; it must be >= to),
// with their range proof. It does not verify the proof; VerifyRecordRange
// or the evidence package does.
func (n *Node) RecordRange(ctx context.Context, payer terms.AccountID, from, to, height int64) (RecordRange, error) {
	return FetchRecordRange(ctx, n, payer, from, to, height)
}

// ProviderRecordRange is RecordRange for the records paid to machine m.
func (n *Node) ProviderRecordRange(ctx context.Context, m identity.MachineID, from, to, height int64) (ProviderRecordRange, error) {
	return FetchRecordRange(ctx, n, m, from, to, height)
}
