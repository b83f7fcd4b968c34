package ledger

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// SkippedRecord is a payment record a settlement skipped: its index in the
// batch, the reason's code and the message.
type SkippedRecord struct {
	Index  uint32 `cbor:"1,keyasint" json:"index"`
	Code   Code   `cbor:"2,keyasint" json:"code"`
	Reason string `cbor:"3,keyasint" json:"reason"`
}

// CodeCount is how many records were skipped for one reason.
type CodeCount struct {
	Code  Code   `cbor:"1,keyasint" json:"code"`
	Count uint32 `cbor:"2,keyasint" json:"count"`
}

// SettleReport is the result data of an applied settlement (canonical CBOR
// in the transaction result's data): how many records settled, which were
// skipped and why, the skips per reason in code order, and the record
// fees the submitter paid for the skipped ones. A submitter
// resubmitting after a crash sees its already-settled records as
// CodeDuplicateRecord skips.
type SettleReport struct {
	Settled uint32          `cbor:"1,keyasint" json:"settled"`
	Skipped []SkippedRecord `cbor:"2,keyasint,omitempty" json:"skipped,omitempty"`
	Counts  []CodeCount     `cbor:"3,keyasint,omitempty" json:"counts,omitempty"`
	// Fee is what the submitter paid for its refused records:
	// FeePerRecord for each skip other than an expiry or a duplicate.
	Fee uint64 `cbor:"4,keyasint,omitempty" json:"fee,omitempty"`
}

// DecodeSettleReport parses a settlement result's data.
func DecodeSettleReport(data []byte) (SettleReport, error) {
	var r SettleReport
	if err := cborx.UnmarshalCanonical(data, MaxTxBytes, &r); err != nil {
		return r, fmt.Errorf("ledger: settle report: %w", err)
	}
	return r, nil
}

func (r *SettleReport) skip(i int, te *TxError) {
	r.Skipped = append(r.Skipped, SkippedRecord{Index: uint32(min(max(i, 0), MaxRecordsPerTx)), Code: te.Code, Reason: te.Msg})
	at, found := slices.BinarySearchFunc(r.Counts, te.Code, func(c CodeCount, k Code) int { return int(c.Code) - int(k) })
	if found {
		r.Counts[at].Count++
		return
	}
	r.Counts = slices.Insert(r.Counts, at, CodeCount{Code: te.Code, Count: 1})
}

// Count is the number of records skipped with code c.
func (r *SettleReport) Count(c Code) uint32 {
	for _, cc := range r.Counts {
		if cc.Code == c {
			return cc.Count
		}
	}
	return 0
}

// String summarises the report for the transaction log.
func (r *SettleReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "settled %d, skipped %d", r.Settled, len(r.Skipped))
	for i, c := range r.Counts {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s %d", sep, c.Code, c.Count)
	}
	if r.Fee != 0 {
		fmt.Fprintf(&b, "; record fees %d", r.Fee)
	}
	return b.String()
}
