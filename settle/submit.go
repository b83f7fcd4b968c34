package settle

import (
	"context"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// Status is what became of one record submitted by SubmitAll.
type Status uint8

// Statuses. Err is the zero value: nothing is known to have happened.
const (
	// Err: the record's transaction did not commit (or its fate is
	// unknown); submit it again later. Resubmission is safe: a record
	// that did settle comes back as Duplicate.
	Err Status = iota
	// Settled: this transaction settled the record.
	Settled
	// Duplicate: the record was already settled on chain, by anyone.
	// Final and fine: the money moved once.
	Duplicate
	// Skipped: the chain (or the stateless pre-check) refused the record
	// with Code; final, it will never settle.
	Skipped
)

func (s Status) String() string {
	switch s {
	case Err:
		return "error"
	case Settled:
		return "settled"
	case Duplicate:
		return "duplicate"
	case Skipped:
		return "skipped"
	}
	return fmt.Sprintf("status %d", uint8(s))
}

// Outcome is one record's result.
type Outcome struct {
	Status Status
	Code   ledger.Code // Duplicate and Skipped: the skip code
	Reason string      // Skipped: the chain's message
	Height int64       // the block the transaction committed in (0 for Err and local skips)
	TxHash [32]byte
	Err    error // Err: why
}

// SubmitAll submits recs in batches (Batches) with sub and returns one
// Outcome per record, in order. A record failing the stateless checks is
// Skipped locally with its code and never sent. Submission stops at the
// first transaction that does not commit: its records and every later one
// are Err, and that failure is also returned as err (outcomes are complete
// either way).
func SubmitAll(ctx context.Context, sub Submitter, recs []ledger.PaymentRecord) ([]Outcome, error) {
	if sub == nil {
		return nil, errors.New("settle: submit: no submitter")
	}
	out := make([]Outcome, len(recs))
	idx := make([]int, 0, len(recs)) // indices into recs of the records sent
	send := make([]ledger.PaymentRecord, 0, len(recs))
	for i := range recs {
		if err := checkRecord(&recs[i]); err != nil {
			te := err.(*ledger.TxError)
			out[i] = Outcome{Status: Skipped, Code: te.Code, Reason: te.Msg}
			continue
		}
		idx = append(idx, i)
		send = append(send, recs[i])
	}
	ends, err := split(send)
	if err != nil {
		return nil, err // unreachable after checkRecord, unless encoding fails
	}
	start := 0
	for bi, end := range ends {
		batch := idx[start:end]
		if err := submitOne(ctx, sub, send[start:end], batch, out); err != nil {
			for _, i := range idx[start:] {
				out[i] = Outcome{Status: Err, Err: err}
			}
			return out, fmt.Errorf("settle: submit batch %d of %d (%d records): %w", bi+1, len(ends), end-start, err)
		}
		start = end
	}
	return out, nil
}

// submitOne submits one settlement and fills out at batch (the records'
// indices in the caller's slice) from its report.
func submitOne(ctx context.Context, sub Submitter, recs []ledger.PaymentRecord, batch []int, out []Outcome) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	res, err := sub.Submit(ctx, &ledger.Settlement{Records: recs})
	if err != nil {
		return err
	}
	rep, err := ledger.DecodeSettleReport(res.Data)
	if err != nil {
		return fmt.Errorf("tx %x committed at %d: %w", res.Hash[:6], res.Height, err)
	}
	if int(rep.Settled)+len(rep.Skipped) != len(recs) {
		return fmt.Errorf("tx %x committed at %d: report covers %d+%d records, batch has %d", res.Hash[:6], res.Height, rep.Settled, len(rep.Skipped), len(recs))
	}
	got := make([]Outcome, len(recs))
	for i := range got {
		got[i] = Outcome{Status: Settled, Height: res.Height, TxHash: res.Hash}
	}
	for _, s := range rep.Skipped {
		if int(s.Index) >= len(recs) || got[s.Index].Status != Settled {
			return fmt.Errorf("tx %x committed at %d: report skips index %d twice or out of range", res.Hash[:6], res.Height, s.Index)
		}
		st := Skipped
		if s.Code == ledger.CodeDuplicateRecord {
			st = Duplicate
		}
		got[s.Index] = Outcome{Status: st, Code: s.Code, Reason: s.Reason, Height: res.Height, TxHash: res.Hash}
	}
	for j, i := range batch {
		out[i] = got[j]
	}
	return nil
}
