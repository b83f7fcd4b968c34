package settle

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

func openTestCollector(t testing.TB, w *world, dir string, interval time.Duration, reg prometheus.Registerer) *Collector {
	c, err := OpenCollector(CollectorConfig{Dir: dir, Interval: interval, BatchRecords: ledger.MaxRecordsPerTx},
		CollectorDeps{Machine: w.machine.MachineID(), Chain: w.chain, Submitter: w.submitter(w.operator), Registerer: reg})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// acceptAll accepts n signed records into c and returns them and Σ price.
func acceptAll(t *testing.T, w *world, c *Collector, n int) ([]receipt.PaymentRecord, uint64) {
	t.Helper()
	recs := make([]receipt.PaymentRecord, n)
	var sum uint64
	for i := range recs {
		recs[i] = w.signed(i, uint64(50+i))
		if err := c.Accept(context.Background(), w.machine.PeerID, &recs[i]); err != nil {
			t.Fatal(err)
		}
		sum += recs[i].Price
	}
	return recs, sum
}

// TestCollectorCrashBeforeSubmit: records accepted, then a hard stop
// before any submission; reopened from the same directory, the collector
// still holds them (Held) and settles every one.
func TestCollectorCrashBeforeSubmit(t *testing.T) {
	const n = 20
	w := newWorld(t, 1_000_000)
	dir := t.TempDir()
	c := openTestCollector(t, w, dir, time.Hour, nil)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs, sum := acceptAll(t, w, c, n)
	esc0 := w.escrowBalance()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := w.settledOnChain(recs); got != 0 {
		t.Fatalf("%d records settled before any submission", got)
	}
	c = openTestCollector(t, w, dir, 50*time.Millisecond, nil)
	defer c.Close()
	if got := c.Held(ledgertest.Account(w.buyer), ledgertest.Account(w.gateway)); got != sum {
		t.Fatalf("reopened collector holds %d, want %d", got, sum)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "reloaded records to settle", func() bool { return c.Stats().Settled == n })
	if got := w.settledOnChain(recs); got != n {
		t.Fatalf("%d of %d settled on chain", got, n)
	}
	if got := w.escrowBalance(); got != esc0-sum {
		t.Fatalf("escrow %d, want %d - %d", got, esc0, sum)
	}
}

// TestCollectorCrashAfterSubmit: the settlement commits but the collector
// dies before storing the outcomes. Reopened, it submits the records
// again; the chain reports them as duplicates, they are stored settled,
// and nothing is paid twice.
func TestCollectorCrashAfterSubmit(t *testing.T) {
	const n = 15
	w := newWorld(t, 1_000_000)
	dir := t.TempDir()
	c := openTestCollector(t, w, dir, 50*time.Millisecond, nil)
	crashed := make(chan struct{})
	var once sync.Once
	c.afterSubmit = func(ctx context.Context) bool {
		once.Do(func() { close(crashed) })
		<-ctx.Done() // die here: the outcomes are never stored
		return true
	}
	esc0, op0 := w.escrowBalance(), w.balance(w.operator)
	recs, sum := acceptAll(t, w, c, n)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-crashed:
	case <-time.After(20 * time.Second):
		t.Fatal("collector never submitted")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := w.settledOnChain(recs); got != n {
		t.Fatalf("the crashed submission settled %d of %d", got, n)
	}
	reg := prometheus.NewRegistry()
	c = openTestCollector(t, w, dir, 50*time.Millisecond, reg)
	defer c.Close()
	if st := c.Stats(); st.Pending != n || st.Settled != 0 {
		t.Fatalf("reopened after the crash: %+v, want %d pending", st, n)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "resubmitted records to be stored settled", func() bool { return c.Stats().Settled == n })
	if got := gathered(t, reg, "tenzro_settle_collector_records_duplicate_total"); got != n {
		t.Fatalf("%v duplicates reported on resubmission, want %d", got, n)
	}
	if got := w.escrowBalance(); got != esc0-sum {
		t.Fatalf("escrow %d, want %d - %d (paid once)", got, esc0, sum)
	}
	if got := w.balance(w.operator); got != op0+sum-n*recordFee {
		t.Fatalf("operator %d, want %d + %d - %d", got, op0, sum, n*recordFee)
	}
	// The stored evidence: every record settled at a real height.
	got, err := c.Records(context.Background(), ledgertest.Account(w.buyer), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d stored records, want %d", len(got), n)
	}
	for _, e := range got {
		if e.State != StateSettled || e.Height <= 0 || len(e.Record.Receipt) == 0 {
			t.Fatalf("stored record %s: state %s height %d receipt %d bytes", e.Record.RequestDigest, e.State, e.Height, len(e.Record.Receipt))
		}
	}
}

// TestCollectorSkipsFinal: a record the escrow cannot cover is skipped
// by the chain with its code, stored as skipped and no longer held; the
// one it covers settles.
func TestCollectorSkipsFinal(t *testing.T) {
	w := newWorld(t, 1000)
	reg := prometheus.NewRegistry()
	c := openTestCollector(t, w, t.TempDir(), 50*time.Millisecond, reg)
	defer c.Close()
	a, b := w.signed(1, 600), w.signed(2, 600)
	for _, r := range []*receipt.PaymentRecord{&a, &b} {
		if err := c.Accept(context.Background(), w.machine.PeerID, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "both records final", func() bool { st := c.Stats(); return st.Settled == 1 && st.Skipped == 1 })
	if got := c.Held(ledgertest.Account(w.buyer), ledgertest.Account(w.gateway)); got != 0 {
		t.Fatalf("held %d after both are final", got)
	}
	if got := w.escrowBalance(); got != 400 {
		t.Fatalf("escrow %d, want 400", got)
	}
	if got := gathered(t, reg, "tenzro_settle_collector_records_skipped_total"); got != 1 {
		t.Fatalf("skipped metric %v, want 1", got)
	}
	recs, err := c.Records(context.Background(), ledgertest.Account(w.buyer), 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []uint32
	for _, e := range recs {
		if e.State == StateSkipped {
			codes = append(codes, e.Code)
		}
	}
	if len(codes) != 1 || ledger.Code(codes[0]) != ledger.CodeOverdraft {
		t.Fatalf("skip codes %v, want [%d]", codes, ledger.CodeOverdraft)
	}

	// Past the retention, final records are pruned; a pending one stays.
	c.loop.halt()
	third := w.signed(3, 100)
	if err := c.Accept(context.Background(), w.machine.PeerID, &third); err != nil {
		t.Fatal(err)
	}
	n, err := c.b.prune(context.Background(), time.Now().Add(time.Hour).UnixNano(), 10)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want the 2 final records", n, err)
	}
	if st := c.Stats(); st.Settled != 0 || st.Skipped != 0 || st.Pending != 1 {
		t.Fatalf("after pruning: %+v", st)
	}
	if recs, err = c.Records(context.Background(), ledgertest.Account(w.buyer), 0); err != nil || len(recs) != 1 || recs[0].State != StatePending {
		t.Fatalf("records after pruning: %d (%v)", len(recs), err)
	}
	if n, err := c.b.prune(context.Background(), time.Now().Add(time.Hour).UnixNano(), 10); err != nil || n != 0 {
		t.Fatalf("second prune deleted %d (%v)", n, err)
	}
}
