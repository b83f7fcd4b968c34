package consensus

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ProviderRecordRange is a provider machine's records, of every payer,
// over a span of heights, proven by the provider index: the provider's
// evidence of what it was paid.
type ProviderRecordRange = RecordSpan[identity.MachineID]

// providerIndex is the index of the records paid to a machine
// (ledger.KeyProviderRecordIndex), served at
// providerrange/<machine>/<from>/<to>.
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
	foreign: func(m identity.MachineID, sr ledger.SettledRecord) string {
		if sr.Record.Provider == m {
			return ""
		}
		return fmt.Sprintf("is of machine %s, not %s", sr.Record.Provider, m)
	},
	entry: func(sr ledger.SettledRecord, h terms.Hash32) (key, value []byte) {
		return ledger.KeyProviderRecordIndex(sr.Record.Provider, sr.Height, sr.Record.Payer, sr.Record.RequestDigest),
			ledger.ProviderRecordIndexValue(sr.Record.Payer, sr.Record.RequestDigest, h)
	},
}

// ProviderRecordRange returns machine m's records settled at heights
// from..to as of the state after block height (0 = latest committed; it
// must be >= to), with their range proof. It does not verify the proof;
// VerifyRecordRange or the evidence package does.
func (n *Node) ProviderRecordRange(ctx context.Context, m identity.MachineID, from, to, height int64) (ProviderRecordRange, error) {
	return FetchRecordRange(ctx, n, m, from, to, height)
}
