package settle

import (
	"context"
	"errors"
	"sync"
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

// plainSubmitter hides SubmitMany, so SubmitAll takes its one-at-a-time
// path.
type plainSubmitter struct{ Submitter }

// TestOutboxSettlesAfterGrace: the provider never acknowledges (every
// delivery fails). Before the grace period nothing is submitted; the
// outbox is restarted in between and reloads its pending records; past
// the grace it submits them itself (one transaction at a time: a plain
// Submitter) and every one settles.
func TestOutboxSettlesAfterGrace(t *testing.T) {
	const n = 12
	ctx := context.Background()
	w := newWorld(t, 1_000_000)
	var attempts atomic.Int64
	deliver := func(context.Context, peer.ID, []receipt.PaymentRecord) ([]bool, error) {
		attempts.Add(1)
		return nil, errors.New("provider unreachable")
	}
	mock := clock.NewMock()
	mock.Set(time.Now())
	dir := t.TempDir()
	open := func(reg prometheus.Registerer) *Outbox {
		ob, err := OpenOutbox(OutboxConfig{Dir: dir, Grace: time.Minute, Interval: time.Second, MaxBackoff: 4 * time.Second},
			OutboxDeps{Key: w.gateway, Chain: w.chain, Submitter: plainSubmitter{w.submitter(w.gateway)}, Deliver: deliver, Clock: mock, Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		if err := ob.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return ob
	}
	ob := open(nil)
	esc0 := w.escrowBalance()
	recs := make([]receipt.PaymentRecord, n)
	var sum uint64
	for i := range recs {
		recs[i] = w.record(i, uint64(10+i))
		if err := ob.Sign(ctx, &recs[i], w.machine.PeerID); err != nil {
			t.Fatal(err)
		}
		sum += recs[i].Price
	}
	eventually(t, 10*time.Second, "a delivery attempt", func() bool { return attempts.Load() > 0 })
	mock.Add(30 * time.Second)
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	if got := w.settledOnChain(recs); got != 0 {
		t.Fatalf("%d records settled before the grace period", got)
	}
	reg := prometheus.NewRegistry()
	ob = open(reg)
	defer ob.Close()
	if st := ob.Stats(); st.Pending != n || st.Delivered != 0 || ob.Unsettled(ledgertest.Account(w.buyer)) != sum {
		t.Fatalf("reopened outbox: %+v unsettled %d, want %d pending worth %d", st, ob.Unsettled(ledgertest.Account(w.buyer)), n, sum)
	}
	before := attempts.Load()
	eventually(t, 30*time.Second, "the outbox to settle its records", func() bool {
		mock.Add(time.Second)
		return ob.Stats().Settled == n
	})
	if attempts.Load() == before {
		t.Fatal("the reopened outbox never retried delivery")
	}
	if got := w.settledOnChain(recs); got != n {
		t.Fatalf("%d of %d settled on chain", got, n)
	}
	if got := w.escrowBalance(); got != esc0-sum {
		t.Fatalf("escrow %d, want %d - %d", got, esc0, sum)
	}
	if got := ob.Unsettled(ledgertest.Account(w.buyer)); got != 0 {
		t.Fatalf("unsettled %d after settlement", got)
	}
	if got := gathered(t, reg, "tenzro_settle_outbox_records_submitted_total"); got != n {
		t.Fatalf("outbox submitted %v records, want %d", got, n)
	}
	if got := gathered(t, reg, "tenzro_settle_outbox_records_acknowledged_total"); got != 0 {
		t.Fatalf("%v records acknowledged by a provider that never answered", got)
	}
}

// TestOutboxPartialAcks: a provider that acknowledges only some records
// of a delivery gets the rest again (after its backoff) until every one
// is acknowledged; acknowledged records are not sent again.
func TestOutboxPartialAcks(t *testing.T) {
	const n = 10
	ctx := context.Background()
	w := newWorld(t, 1000)
	var calls atomic.Int64
	sent := map[terms.Hash32]int{}
	var mu sync.Mutex
	deliver := func(_ context.Context, _ peer.ID, recs []receipt.PaymentRecord) ([]bool, error) {
		first := calls.Add(1) == 1
		mu.Lock()
		defer mu.Unlock()
		acked := make([]bool, len(recs))
		for i := range recs {
			sent[recs[i].RequestDigest]++
			acked[i] = !first || i%2 == 0
		}
		return acked, nil
	}
	ob, err := OpenOutbox(OutboxConfig{Dir: t.TempDir(), Interval: 20 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Grace: time.Hour},
		OutboxDeps{Key: w.gateway, Chain: w.chain, Submitter: w.submitter(w.gateway), Deliver: deliver})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	for i := range n {
		r := w.record(i, 5)
		if err := ob.Sign(ctx, &r, w.machine.PeerID); err != nil {
			t.Fatal(err)
		}
	}
	if err := ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "every record acknowledged", func() bool { return ob.Stats().Delivered == n })
	time.Sleep(100 * time.Millisecond) // a few more ticks: nothing more is sent
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, c := range sent {
		total += c
	}
	if len(sent) != n || total != n+n/2 {
		t.Fatalf("%d distinct records sent %d times, want %d sent %d times (the unacknowledged half twice)", len(sent), total, n, n+n/2)
	}
}
