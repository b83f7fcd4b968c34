package settle

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// fault is the code and reason of a checkRecord error. It is a
// *ledger.TxError; errors.As keeps that true of a wrapped one, and anything
// else is the chain's internal code rather than a crash.
func fault(err error) (ledger.Code, string) {
	var te *ledger.TxError
	if errors.As(err, &te) {
		return te.Code, te.Msg
	}
	return ledger.CodeOf(err), err.Error()
}

// envelopeMargin is what a signed transaction adds around its payload: the
// body's signer, nonce and kind, the byte-string headers and the
// signature come to about 140 bytes; the rest is headroom.
const envelopeMargin = 1 << 10

// maxPayloadBytes is the largest settlement payload Batches emits.
const maxPayloadBytes = ledger.MaxTxBytes - envelopeMargin

// checkRecord applies the chain's stateless checks of one record, so that
// a record that would make its whole transaction malformed is caught
// before it is batched with others.
func checkRecord(r *receipt.PaymentRecord) error {
	switch {
	case r.Price == 0:
		return &ledger.TxError{Code: ledger.CodeMalformed, Msg: "price is 0"}
	case len(r.Receipt) > receipt.MaxReceiptBytes:
		return &ledger.TxError{Code: ledger.CodeTooLarge, Msg: fmt.Sprintf("receipt is %d bytes, limit %d", len(r.Receipt), receipt.MaxReceiptBytes)}
	case len(r.Sig) != ed25519.SignatureSize:
		return &ledger.TxError{Code: ledger.CodeMalformed, Msg: fmt.Sprintf("signature is %d bytes, want %d", len(r.Sig), ed25519.SignatureSize)}
	}
	return nil
}

// arrayHeader is the size of a CBOR array header for n elements.
func arrayHeader(n int) int {
	switch {
	case n < 24:
		return 1
	case n < 1<<8:
		return 2
	case n < 1<<16:
		return 3
	default:
		return 5
	}
}

// split groups recs, in order, into runs whose settlement payload fits
// maxPayloadBytes and ledger.MaxRecordsPerTx; it returns the run ends.
func split(recs []receipt.PaymentRecord) ([]int, error) {
	var ends []int
	size, n := 0, 0 // Σ encoded record sizes and count of the open run
	for i := range recs {
		if err := checkRecord(&recs[i]); err != nil {
			return nil, fmt.Errorf("settle: batch: record %d: %w", i, err)
		}
		b, err := cborx.Marshal(&recs[i])
		if err != nil {
			return nil, fmt.Errorf("settle: batch: record %d: %w", i, err)
		}
		// Settlement is a one-entry map {1: [records...]}.
		fits := func(size, n int) bool { return 2+arrayHeader(n)+size <= maxPayloadBytes }
		if !fits(len(b), 1) {
			return nil, fmt.Errorf("settle: batch: record %d alone is %d bytes, over %d", i, len(b), maxPayloadBytes)
		}
		if n > 0 && (n == ledger.MaxRecordsPerTx || !fits(size+len(b), n+1)) {
			ends = append(ends, i)
			size, n = 0, 0
		}
		size += len(b)
		n++
	}
	if n > 0 {
		ends = append(ends, len(recs))
	}
	return ends, nil
}

// Batches splits recs, in order, into Settlement payloads each of which,
// signed, fits ledger.MaxTxBytes and holds at most ledger.MaxRecordsPerTx
// records. A record failing the chain's stateless checks (price 0, an
// oversized receipt, a signature of the wrong length) is an error: it
// would make its whole transaction malformed.
func Batches(recs []receipt.PaymentRecord) ([]*ledger.Settlement, error) {
	ends, err := split(recs)
	if err != nil {
		return nil, err
	}
	out := make([]*ledger.Settlement, 0, len(ends))
	start := 0
	for _, end := range ends {
		out = append(out, &ledger.Settlement{Records: recs[start:end:end]})
		start = end
	}
	return out, nil
}
