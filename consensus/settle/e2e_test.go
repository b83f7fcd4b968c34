package settle

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestOutboxCollectorEndToEnd signs records in a gateway's outbox,
// delivers them straight into the provider's collector, lets the
// collector settle them, and checks the money: the escrow fell by exactly
// Σ price, the operator rose by Σ (price − record fee), every record
// settled exactly once; after its grace the outbox finds them settled and
// submits nothing itself.
func TestOutboxCollectorEndToEnd(t *testing.T) {
	const n = 60
	w := newWorld(t, 10_000_000)
	ctx := w.progress()
	reg := prometheus.NewRegistry()
	col, err := OpenCollector(CollectorConfig{Dir: t.TempDir(), Interval: 100 * time.Millisecond, BatchRecords: 25},
		CollectorDeps{Machine: w.machine.MachineID(), Chain: w.chain, Submitter: w.submitter(w.operator), Registerer: reg,
			Expect: func(terms.Hash32) (uint64, bool) { return 0, false }})
	if err != nil {
		t.Fatal(err)
	}
	var delivered atomic.Int64
	deliver := func(ctx context.Context, p peer.ID, recs []receipt.PaymentRecord) ([]bool, error) {
		if p != w.machine.PeerID {
			t.Errorf("delivered to %s, want %s", p, w.machine.PeerID)
		}
		acked := make([]bool, len(recs))
		for i := range recs {
			acked[i] = col.Accept(ctx, w.machine.PeerID, &recs[i]) == nil
		}
		delivered.Add(int64(len(recs)))
		return acked, nil
	}
	mock := clock.NewMock()
	mock.Set(time.Now())
	ob, err := OpenOutbox(OutboxConfig{Dir: t.TempDir(), Grace: time.Minute, Interval: time.Second},
		OutboxDeps{Key: w.gateway, Chain: w.chain, Submitter: w.submitter(w.gateway), Deliver: deliver, Clock: mock, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []interface{ Start(context.Context) error }{col, ob} {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	esc0, op0, gw0 := w.escrowBalance(), w.balance(w.operator), w.balance(w.gateway)
	var sum uint64
	recs := make([]receipt.PaymentRecord, n)
	for i := range recs {
		recs[i] = w.record(i, uint64(100+i))
		if err := ob.Sign(ctx, &recs[i], w.machine.PeerID); err != nil {
			t.Fatal(err)
		}
		if err := recs[i].VerifySig(w.net.ChainID); err != nil || recs[i].Settler != ledgertest.Account(w.gateway) {
			t.Fatalf("signed record %d: settler %s: %v", i, recs[i].Settler, err)
		}
		sum += recs[i].Price
	}
	if err := ob.Sign(ctx, new(w.record(0, 1)), w.machine.PeerID); err == nil {
		t.Fatal("a second record for one request was signed")
	}
	if got := ob.Unsettled(ledgertest.Account(w.buyer)); got != sum {
		t.Fatalf("outbox unsettled %d right after signing, want %d", got, sum)
	}
	eventually(t, 30*time.Second, "all records settled by the collector", func() bool {
		return col.Stats().Settled == n && w.escrowBalance() == esc0-sum
	})
	if got := w.settledOnChain(recs); got != n {
		t.Fatalf("%d of %d records settled on chain", got, n)
	}
	if got := w.balance(w.operator); got != op0+sum-n*recordFee {
		t.Fatalf("operator balance %d, want %d + %d - %d fees", got, op0, sum, n*recordFee)
	}
	if col.Held(ledgertest.Account(w.buyer), ledgertest.Account(w.gateway)) != 0 {
		t.Fatalf("collector still holds %d after settlement", col.Held(ledgertest.Account(w.buyer), ledgertest.Account(w.gateway)))
	}
	if st := ob.Stats(); st.Delivered != n || st.Pending != n {
		t.Fatalf("outbox before grace: %+v, want %d pending, all delivered", st, n)
	}
	// Past the grace, the outbox finds every record settled and submits none.
	mock.Add(time.Minute + time.Second)
	eventually(t, 20*time.Second, "outbox to see every record settled", func() bool { return ob.Stats().Settled == n })
	if got := ob.Unsettled(ledgertest.Account(w.buyer)); got != 0 {
		t.Fatalf("outbox unsettled %d after settlement", got)
	}
	if got := gathered(t, reg, "tenzro_settle_outbox_records_submitted_total"); got != 0 {
		t.Fatalf("outbox submitted %v records the collector had settled", got)
	}
	if got := w.balance(w.gateway); got != gw0 {
		t.Fatalf("gateway balance moved %d -> %d", gw0, got)
	}
	// The money moved once: the escrow fell by exactly Σ price.
	if got := w.escrowBalance(); got != esc0-sum {
		t.Fatalf("escrow %d, want %d - %d", got, esc0, sum)
	}
	for name, want := range map[string]float64{
		"tenzro_settle_outbox_records_signed_total": n, "tenzro_settle_outbox_records_acknowledged_total": n,
		"tenzro_settle_collector_records_accepted_total": n, "tenzro_settle_collector_records_settled_total": n,
	} {
		if got := gathered(t, reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if err := ob.Stop(ctx); err != nil {
		t.Error(err)
	}
	if err := col.Stop(ctx); err != nil {
		t.Error(err)
	}
	if delivered.Load() != n {
		t.Errorf("%d records delivered, want %d (each once)", delivered.Load(), n)
	}
}

// gathered sums the samples of metric name in reg.
func gathered(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return v
}
