package settle

import (
	"context"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
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
	// Preempted: the chain skipped the record as a duplicate, but the
	// record it settled for the call is another one (checkDuplicates):
	// final, and not this record's money. Code is CodeDuplicateRecord.
	Preempted
)

// Outcome is one record's result.
type Outcome struct {
	Status Status
	Code   ledger.Code // Duplicate, Skipped and Preempted: the skip code
	Reason string      // Skipped and Preempted: why
	Height int64       // the block the transaction committed in (0 for Err and local skips)
	TxHash [32]byte
	Err    error // Err: why
}

// ManySubmitter is a Submitter that can keep several transactions in
// flight (consensus.Submitter.SubmitMany): SubmitAll then broadcasts a
// window of batches before waiting, so they share blocks.
type ManySubmitter interface {
	Submitter
	SubmitMany(ctx context.Context, payloads []any) ([]consensus.TxResult, []error)
}

var _ ManySubmitter = (*consensus.Submitter)(nil)

// pipelineDepth bounds the settlement transactions in flight at once
// (each up to 1 MB; a default CometBFT block holds 4 MB).
const pipelineDepth = 8

// SubmitAll submits recs in batches (Batches) with sub and returns one
// Outcome per record, in order. A record failing the stateless checks is
// Skipped locally with its code and never sent. A batch whose transaction
// does not commit has Err outcomes; with a plain Submitter submission
// stops there (every later record is Err too), with a ManySubmitter the
// batches already in flight still count. The first failure is also
// returned as err; outcomes are complete either way.
func SubmitAll(ctx context.Context, sub Submitter, recs []receipt.PaymentRecord) ([]Outcome, error) {
	if sub == nil {
		return nil, errors.New("settle: submit: no submitter")
	}
	out := make([]Outcome, len(recs))
	idx := make([]int, 0, len(recs)) // indices into recs of the records sent
	send := make([]receipt.PaymentRecord, 0, len(recs))
	for i := range recs {
		if err := checkRecord(&recs[i]); err != nil {
			code, reason := fault(err)
			out[i] = Outcome{Status: Skipped, Code: code, Reason: reason}
			continue
		}
		idx = append(idx, i)
		send = append(send, recs[i])
	}
	batches, err := Batches(send)
	if err != nil {
		return nil, err // unreachable after checkRecord, unless encoding fails
	}
	// Batch b is send[starts[b]:ends[b]], so its outcomes go to
	// idx[starts[b]:ends[b]].
	starts, ends := make([]int, len(batches)), make([]int, len(batches))
	for b, st := range batches {
		if b > 0 {
			starts[b] = ends[b-1]
		}
		ends[b] = starts[b] + len(st.Records)
	}
	fail := func(from, bi int, err error) error {
		for _, i := range idx[from:] {
			out[i] = Outcome{Status: Err, Err: err}
		}
		return fmt.Errorf("settle: submit batch %d of %d: %w", bi+1, len(ends), err)
	}
	many, pipelined := sub.(ManySubmitter)
	var first error
	for w := 0; w < len(ends); {
		if err := ctx.Err(); err != nil {
			return out, firstErr(first, fail(starts[w], w, err))
		}
		if !pipelined {
			res, err := sub.Submit(ctx, batches[w])
			if err == nil {
				err = fillOutcomes(res, idx[starts[w]:ends[w]], out)
			}
			if err != nil {
				return out, firstErr(first, fail(starts[w], w, err))
			}
			w++
			continue
		}
		n := min(pipelineDepth, len(ends)-w)
		payloads := make([]any, n)
		for j := range payloads {
			payloads[j] = batches[w+j]
		}
		results, errs := many.SubmitMany(ctx, payloads)
		for j := range n {
			bi := w + j
			err := errs[j]
			if err == nil {
				err = fillOutcomes(results[j], idx[starts[bi]:ends[bi]], out)
			}
			if err != nil {
				for _, i := range idx[starts[bi]:ends[bi]] {
					out[i] = Outcome{Status: Err, Err: err}
				}
				if first == nil {
					first = fmt.Errorf("settle: submit batch %d of %d: %w", bi+1, len(ends), err)
				}
			}
		}
		if first != nil {
			if w+n < len(ends) {
				_ = fail(starts[w+n], w+n, first) // marks the batches not sent; first is the error returned
			}
			return out, first
		}
		w += n
	}
	return out, nil
}

// fillOutcomes fills out at batch (the records' indices in the caller's
// slice) from a committed settlement's report.
func fillOutcomes(res consensus.TxResult, batch []int, out []Outcome) error {
	n := len(batch)
	rep, err := ledger.DecodeSettleReport(res.Data)
	if err != nil {
		return fmt.Errorf("tx %x committed at %d: %w", res.Hash[:6], res.Height, err)
	}
	if int(rep.Settled)+len(rep.Skipped) != n {
		return fmt.Errorf("tx %x committed at %d: report covers %d+%d records, batch has %d", res.Hash[:6], res.Height, rep.Settled, len(rep.Skipped), n)
	}
	got := make([]Outcome, n)
	for i := range got {
		got[i] = Outcome{Status: Settled, Height: res.Height, TxHash: res.Hash}
	}
	for _, s := range rep.Skipped {
		if int(s.Index) >= n || got[s.Index].Status != Settled {
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
