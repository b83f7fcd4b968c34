package settle

import (
	crand "crypto/rand"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// TestBatchesSplitBySize checks, for random record sets of up to 400
// records with real receipt envelopes (~6 KB) and random larger ones up
// to the receipt limit, that every batch signed as a transaction is
// within MaxTxBytes and decodes on chain, that the batches are the input
// in order, and that each batch but the last is full: the next record
// would not have fitted.
func TestBatchesSplitBySize(t *testing.T) {
	m := ledgertest.TestMachine(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	env, _, err := m.Receipt([]byte("answer"))
	if err != nil {
		t.Fatal(err)
	}
	if len(env) < 4<<10 {
		t.Fatalf("receipt envelope is %d bytes; the test wants a realistic one (> 4 KB)", len(env))
	}
	signer := ledger.NewSigner(ledgertest.NewKey(), "settle-test")
	rng := rand.New(rand.NewPCG(7, 11))
	for round, n := range []int{400, 1 + rng.IntN(400), 1 + rng.IntN(400), 1} {
		recs := make([]receipt.PaymentRecord, n)
		for i := range recs {
			r := receipt.PaymentRecord{Price: 1 + rng.Uint64N(1e9), Receipt: env, ExpiryHeight: rng.Int64N(1 << 40), Sig: make([]byte, 64)}
			if rng.IntN(4) == 0 {
				r.Receipt = make([]byte, rng.IntN(receipt.MaxReceiptBytes)+1)
			}
			crand.Read(r.Sig)
			crand.Read(r.RequestDigest[:])
			recs[i] = r
		}
		batches, err := Batches(recs)
		if err != nil {
			t.Fatal(err)
		}
		at := 0
		for bi, b := range batches {
			if len(b.Records) == 0 || len(b.Records) > ledger.MaxRecordsPerTx {
				t.Fatalf("round %d batch %d has %d records", round, bi, len(b.Records))
			}
			for j := range b.Records {
				if b.Records[j].RequestDigest != recs[at+j].RequestDigest {
					t.Fatalf("round %d batch %d record %d is not input record %d", round, bi, j, at+j)
				}
			}
			at += len(b.Records)
			raw, err := signer.SignTx(0, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > ledger.MaxTxBytes {
				t.Fatalf("round %d batch %d: tx is %d bytes, limit %d", round, bi, len(raw), ledger.MaxTxBytes)
			}
			if _, err := ledger.DecodeTx("settle-test", raw); err != nil {
				t.Fatalf("round %d batch %d: chain refuses the tx: %v", round, bi, err)
			}
			if bi < len(batches)-1 {
				grown := &ledger.Settlement{Records: append(append([]receipt.PaymentRecord(nil), b.Records...), recs[at])}
				enc, err := cborx.Marshal(grown)
				if err != nil {
					t.Fatal(err)
				}
				if len(enc) <= maxPayloadBytes {
					t.Fatalf("round %d batch %d is not full: %d bytes with the next record still fit", round, bi, len(enc))
				}
			}
		}
		if at != n {
			t.Fatalf("round %d: batches hold %d of %d records", round, at, n)
		}
		if n == 400 && len(batches) < 3 {
			t.Fatalf("400 records of ~6 KB in %d batches: not split by size", len(batches))
		}
	}
}

// TestBatchesCountLimit: the smallest records (≈290 bytes: the hashes
// and signature are fixed-size) would fit thousands to a transaction, so
// MaxRecordsPerTx (256), not MaxTxBytes, bounds these; no batch exceeds
// either limit.
func TestBatchesCountLimit(t *testing.T) {
	recs := make([]receipt.PaymentRecord, ledger.MaxRecordsPerTx+5)
	for i := range recs {
		recs[i] = receipt.PaymentRecord{Price: 1, Sig: make([]byte, 64)}
	}
	b, err := Batches(recs)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, s := range b {
		enc, err := cborx.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Records) > ledger.MaxRecordsPerTx || len(enc) > maxPayloadBytes {
			t.Fatalf("batch %d: %d records, %d bytes", i, len(s.Records), len(enc))
		}
		total += len(s.Records)
	}
	if len(b) != 2 || total != len(recs) {
		t.Fatalf("got %d batches holding %d records, want 2 holding %d", len(b), total, len(recs))
	}
}

// TestBatchesRefuseMalformed: a record that would make its transaction
// malformed is an error naming it, never a batch.
func TestBatchesRefuseMalformed(t *testing.T) {
	good := receipt.PaymentRecord{Price: 1, Sig: make([]byte, 64)}
	for name, bad := range map[string]receipt.PaymentRecord{
		"price 0":       {Sig: make([]byte, 64)},
		"short sig":     {Price: 1, Sig: make([]byte, 10)},
		"large receipt": {Price: 1, Sig: make([]byte, 64), Receipt: make([]byte, receipt.MaxReceiptBytes+1)},
	} {
		if _, err := Batches([]receipt.PaymentRecord{good, bad}); err == nil {
			t.Errorf("%s: batched", name)
		}
	}
	if b, err := Batches(nil); err != nil || len(b) != 0 {
		t.Errorf("no records: %d batches, %v", len(b), err)
	}
}
