package settle

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// syncBuffer is a log sink tests read while components write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pair is a gateway's outbox delivering straight into the provider's
// collector (not started: each test starts them when it wants them to
// settle), sharing one registry and one log.
type pair struct {
	col  *Collector
	ob   *Outbox
	reg  *prometheus.Registry
	log  *syncBuffer
	mock *clock.Mock
}

func newPair(t *testing.T, w *world) *pair {
	t.Helper()
	p := &pair{reg: prometheus.NewRegistry(), log: &syncBuffer{}, mock: clock.NewMock()}
	p.mock.Set(time.Now())
	lg := slog.New(slog.NewTextHandler(p.log, nil))
	var err error
	p.col, err = OpenCollector(CollectorConfig{Dir: t.TempDir(), Interval: 100 * time.Millisecond},
		CollectorDeps{Machine: w.machine.MachineID(), Chain: w.chain, Submitter: w.submitter(w.operator), Registerer: p.reg, Log: lg})
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(ctx context.Context, _ peer.ID, recs []receipt.PaymentRecord) ([]bool, error) {
		acked := make([]bool, len(recs))
		for i := range recs {
			acked[i] = p.col.Accept(ctx, w.machine.PeerID, &recs[i]) == nil
		}
		return acked, nil
	}
	p.ob, err = OpenOutbox(OutboxConfig{Dir: t.TempDir(), Grace: time.Minute, Interval: time.Second},
		OutboxDeps{Key: w.gateway, Chain: w.chain, Submitter: w.submitter(w.gateway), Deliver: deliver, Clock: p.mock, Registerer: p.reg, Log: lg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.ob.Close(); p.col.Close() })
	return p
}

// paidCall is the honest record of one call the provider served to the
// buyer under the gateway, owed owed (the receipt signs it), billed
// owed+1, signed by the gateway's outbox and delivered to the collector.
func (p *pair) paidCall(t *testing.T, ctx context.Context, w *world, seed string, owed uint64) receipt.PaymentRecord {
	t.Helper()
	env, hash, rd, err := w.machine.PaidReceipt([]byte(seed+ledgertest.Account(w.buyer).String()), ledgertest.Account(w.buyer), ledgertest.Account(w.gateway), owed)
	if err != nil {
		t.Fatal(err)
	}
	rec := receipt.PaymentRecord{Payer: ledgertest.Account(w.buyer), Provider: w.machine.MachineID(), RequestDigest: rd, QuoteDigest: rd,
		Price: owed + 1, ReceiptHash: hash, Receipt: env, Units: 7}
	if err := p.ob.Sign(ctx, &rec, w.machine.PeerID); err != nil {
		t.Fatal(err)
	}
	if err := p.ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the record delivered", func() bool { p.mock.Add(time.Second); return p.ob.Stats().Delivered == 1 })
	return rec
}

// TestFrontRunAttackRefused is issue 35's attack on a real chain: the
// buyer funds an escrow with itself as settler, takes the gateway's
// record from the answer, re-signs it with Price 1 and Settler = buyer and
// submits it before the provider's collector, together with every other
// variation (settler, payer, price lowered or raised, units, a request
// never served, a record without a receipt). Each is refused with its
// code; the collector then settles the honest record, the operator is
// credited the honest price, the attacker's own escrow never moves, the
// outbox finds its own record settled, and a replay is a duplicate that
// still counts as the holder's own.
func TestFrontRunAttackRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w := newWorld(t, 1_000_000)
	w.mustSubmit(ctx, w.submitter(w.buyer), &ledger.EscrowFund{Amount: 100_000, Settler: ledgertest.Account(w.buyer)})
	// An accomplice's escrow the buyer settles too: a payer to swap in.
	accomplice := ledgertest.NewKey()
	richMu.Lock()
	w.mustSubmit(ctx, richSub, &ledger.Transfer{To: ledgertest.Account(accomplice), Amount: 200_000})
	richMu.Unlock()
	w.mustSubmit(ctx, w.submitter(accomplice), &ledger.EscrowFund{Amount: 100_000, Settler: ledgertest.Account(w.buyer)})
	p := newPair(t, w)
	const owed = 500
	honest := p.paidCall(t, ctx, w, "front-run", owed)
	esc0, op0 := w.escrowBalance(), w.balance(w.operator)

	resign := func(f func(*receipt.PaymentRecord)) receipt.PaymentRecord {
		r := honest
		f(&r)
		if err := receipt.SignRecord(w.buyer, w.net.ChainID, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name string
		rec  receipt.PaymentRecord
		code ledger.Code
	}{
		{"price 1, settler buyer", resign(func(r *receipt.PaymentRecord) { r.Price = 1 }), ledger.CodeRecordMismatch},
		{"settler buyer", resign(func(*receipt.PaymentRecord) {}), ledger.CodeRecordMismatch},
		{"settler buyer, price raised", resign(func(r *receipt.PaymentRecord) { r.Price = 50_000 }), ledger.CodeRecordMismatch},
		{"settler buyer, units changed", resign(func(r *receipt.PaymentRecord) { r.Units, r.Price = 1, 70 }), ledger.CodeRecordMismatch},
		{"payer swapped, settler buyer", resign(func(r *receipt.PaymentRecord) { r.Payer = ledgertest.Account(accomplice) }), ledger.CodeRecordMismatch},
		{"request never served", resign(func(r *receipt.PaymentRecord) { r.RequestDigest = terms.Hash32{0x35} }), ledger.CodeRecordMismatch},
		{"no receipt", resign(func(r *receipt.PaymentRecord) { r.RequestDigest, r.Receipt = terms.Hash32{0x36}, nil }), ledger.CodeBadReceipt},
	}
	recs := make([]receipt.PaymentRecord, len(cases))
	for i := range cases {
		recs[i] = cases[i].rec
	}
	outs, err := SubmitAll(ctx, w.submitter(w.buyer), recs)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if outs[i].Status != Skipped || outs[i].Code != c.code {
			t.Errorf("%s: %v %v (%s), want skipped with %v", c.name, outs[i].Status, outs[i].Code, outs[i].Reason, c.code)
		}
	}

	if err := p.col.Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the honest record settled by the collector", func() bool { return p.col.Stats().Settled == 1 })
	if got := w.balance(w.operator); got != op0+honest.Price-recordFee {
		t.Fatalf("operator %d, want %d + %d − fee", got, op0, honest.Price)
	}
	if got := w.escrowBalance(); got != esc0-honest.Price {
		t.Fatalf("gateway's escrow %d, want %d − %d", got, esc0, honest.Price)
	}
	if e, _, err := w.node.Escrow(ctx, ledgertest.Account(w.buyer), ledgertest.Account(w.buyer)); err != nil || e.Balance != 100_000 {
		t.Fatalf("the attacker's own escrow %+v (%v), want untouched", e, err)
	}
	p.mock.Add(4 * time.Second) // past CheckAfter: the outbox looks on chain
	eventually(t, 10*time.Second, "the outbox to find its record settled", func() bool {
		p.mock.Add(time.Second)
		return p.ob.Stats().Settled == 1
	})
	// A replay is a duplicate whose digest is the holder's own: settled.
	outs, err = SubmitAll(ctx, w.submitter(w.buyer), []receipt.PaymentRecord{honest})
	if err != nil {
		t.Fatal(err)
	}
	checkDuplicates(ctx, w.chain, "test", slog.New(slog.DiscardHandler), []receipt.PaymentRecord{honest}, outs)
	if outs[0].Status != Duplicate {
		t.Fatalf("replay: %v %v, want duplicate", outs[0].Status, outs[0].Code)
	}
	for name, want := range map[string]float64{
		"tenzro_settle_collector_records_settled_total": 1, "tenzro_settle_collector_records_preempted_total": 0,
		"tenzro_settle_outbox_records_settled_total": 1, "tenzro_settle_outbox_records_preempted_total": 0,
		"tenzro_settle_outbox_records_submitted_total": 0,
	} {
		if got := gathered(t, p.reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// TestPreemptedDuplicateReported: when the chain settled another record
// for the call (here the gateway's key signed a second one at another
// price, as a restored or duplicated gateway could), "duplicate" is not
// "settled": the collector and the outbox compare digests, count the
// record pre-empted, log an error and keep it out of what they count as
// settled.
func TestPreemptedDuplicateReported(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w := newWorld(t, 1_000_000)
	p := newPair(t, w)
	held := p.paidCall(t, ctx, w, "pre-empted", 300)
	other := held
	other.Price++
	if err := receipt.SignRecord(w.gateway, w.net.ChainID, &other); err != nil {
		t.Fatal(err)
	}
	outs, err := SubmitAll(ctx, w.submitter(w.buyer), []receipt.PaymentRecord{other})
	if err != nil || outs[0].Status != Settled {
		t.Fatalf("the other record: %+v, %v", outs, err)
	}
	if err := p.col.Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the collector to finish the held record", func() bool { return p.col.Stats().Skipped == 1 })
	p.mock.Add(4 * time.Second)
	eventually(t, 10*time.Second, "the outbox to finish the held record", func() bool {
		p.mock.Add(time.Second)
		return p.ob.Stats().Skipped == 1
	})
	if st := p.col.Stats(); st.Settled != 0 || st.Pending != 0 {
		t.Fatalf("collector %+v: the pre-empted record counted", st)
	}
	if got := p.ob.Unsettled(ledgertest.Account(w.buyer)); got != 0 {
		t.Fatalf("outbox still counts %d unsettled", got)
	}
	for name, want := range map[string]float64{
		"tenzro_settle_collector_records_preempted_total": 1, "tenzro_settle_collector_records_settled_total": 0,
		"tenzro_settle_outbox_records_preempted_total": 1, "tenzro_settle_outbox_records_settled_total": 0,
	} {
		if got := gathered(t, p.reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	logs := p.log.String()
	for _, side := range []string{"collector", "outbox"} {
		if !strings.Contains(logs, "level=ERROR msg=\"settle: "+side+": record pre-empted") {
			t.Errorf("no error line for the %s's pre-empted record in:\n%s", side, logs)
		}
	}
}
