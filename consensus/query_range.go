package consensus

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// RecordRange is a payer's records over a span of heights, proven by the
// payer index.
type RecordRange = RecordSpan[terms.AccountID]

// payerIndex is the index of a payer's records (ledger.KeyRecordIndex),
// served at recordrange/<payer>/<from>/<to>.
var payerIndex = recordIndex[terms.AccountID]{
	route:  "recordrange",
	bounds: ledger.RecordIndexRange,
	locate: func(payer terms.AccountID, k, _ []byte) (terms.AccountID, terms.Hash32, error) {
		var d terms.Hash32
		copy(d[:], k[42:])
		return payer, d, nil
	},
	foreign: func(payer terms.AccountID, sr ledger.SettledRecord) string {
		if sr.Record.Payer == payer {
			return ""
		}
		return fmt.Sprintf("is paid by %s, not %s", sr.Record.Payer, payer)
	},
	entry: func(sr ledger.SettledRecord, h terms.Hash32) (key, value []byte) {
		return ledger.KeyRecordIndex(sr.Record.Payer, sr.Height, sr.Record.RequestDigest), h[:]
	},
}

// RecordRange returns payer's records settled at heights from..to as of
// the state after block height (0 = latest committed; it must be >= to),
// with their range proof. It does not verify the proof; VerifyRecordRange
// or the evidence package does.
func (n *Node) RecordRange(ctx context.Context, payer terms.AccountID, from, to, height int64) (RecordRange, error) {
	return FetchRecordRange(ctx, n, payer, from, to, height)
}
