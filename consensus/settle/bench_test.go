package settle

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// BenchmarkCollectorAccept measures Accept: verify a record's signature
// and receipt hash and store it durably (one fsync per record; pebble
// groups concurrent ones).
func BenchmarkCollectorAccept(b *testing.B) {
	w := newWorld(b, 1<<40)
	c := openTestCollector(b, w, b.TempDir(), time.Hour, nil)
	defer c.Close()
	recs := make([]receipt.PaymentRecord, b.N)
	for i := range recs {
		recs[i] = w.signed(i, 10)
	}
	b.ResetTimer()
	for i := range recs {
		if err := c.Accept(context.Background(), w.machine.PeerID, &recs[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOutboxSign measures Sign: sign a record and store it durably.
func BenchmarkOutboxSign(b *testing.B) {
	w := newWorld(b, 1<<40)
	ob, err := OpenOutbox(OutboxConfig{Dir: b.TempDir()}, OutboxDeps{Key: w.gateway, Chain: w.chain, Submitter: w.submitter(w.gateway),
		Deliver: func(context.Context, peer.ID, []receipt.PaymentRecord) ([]bool, error) { return nil, context.Canceled }})
	if err != nil {
		b.Fatal(err)
	}
	defer ob.Close()
	recs := make([]receipt.PaymentRecord, b.N)
	for i := range recs {
		recs[i] = w.record(i, 10)
	}
	b.ResetTimer()
	for i := range recs {
		if err := ob.Sign(context.Background(), &recs[i], w.machine.PeerID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCollectorSettle measures records settled per second by the
// collector on the single-validator test chain (block time 60ms): b.N
// records are accepted, then the loop submits them in size-split
// batches, one transaction committed at a time.
func BenchmarkCollectorSettle(b *testing.B) {
	w := newWorld(b, 1<<40)
	c, err := OpenCollector(CollectorConfig{Dir: b.TempDir(), Interval: 20 * time.Millisecond, BatchRecords: ledger.MaxRecordsPerTx, SubmitBatch: 4 * ledger.MaxRecordsPerTx},
		CollectorDeps{Machine: w.machine.MachineID(), Chain: w.chain, Submitter: w.submitter(w.operator)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for i := range b.N {
		r := w.signed(i, 10)
		if err := c.Accept(context.Background(), w.machine.PeerID, &r); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	for c.Stats().Settled < b.N {
		time.Sleep(5 * time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}
