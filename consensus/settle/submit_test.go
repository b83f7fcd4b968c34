package settle

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// TestSubmitAllOnChain submits 400 records with real ~6 KB receipts in
// one call: the chain takes every size-split batch, each record is
// Settled with its block, and a locally malformed one is Skipped without
// being sent. Submitting them all again changes nothing and reports each
// as Duplicate.
func TestSubmitAllOnChain(t *testing.T) {
	const n = 400
	w := newWorld(t, 1_000_000)
	ctx := w.progress()
	recs := make([]receipt.PaymentRecord, n+1)
	var sum uint64
	for i := range n {
		recs[i] = w.signed(i, 7)
		sum += 7
	}
	recs[n] = w.signed(n, 7)
	recs[n].Sig = recs[n].Sig[:10]
	esc0 := w.escrowBalance()
	sub := w.submitter(w.operator)
	outs, err := SubmitAll(ctx, sub, recs)
	if err != nil {
		t.Fatal(err)
	}
	txs := map[[32]byte]bool{}
	for i, o := range outs[:n] {
		if o.Status != Settled || o.Height <= 0 {
			t.Fatalf("record %d: %+v", i, o)
		}
		txs[o.TxHash] = true
	}
	if len(txs) < 3 {
		t.Fatalf("400 records of ~6 KB went in %d transactions", len(txs))
	}
	if o := outs[n]; o.Status != Skipped || o.Code != ledger.CodeMalformed || o.Height != 0 {
		t.Fatalf("malformed record: %+v", o)
	}
	if got := w.escrowBalance(); got != esc0-sum {
		t.Fatalf("escrow %d, want %d - %d", got, esc0, sum)
	}
	outs, err = SubmitAll(ctx, sub, recs[:n])
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if o.Status != Duplicate || o.Code != ledger.CodeDuplicateRecord {
			t.Fatalf("resubmitted record %d: %+v", i, o)
		}
	}
	if got := w.escrowBalance(); got != esc0-sum {
		t.Fatalf("escrow after resubmission %d, want %d", got, esc0-sum)
	}
}
