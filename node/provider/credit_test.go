package provider

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// noRecords stands for a collector holding nothing: these tests are about
// the calls credit control itself tracks.
type noRecords struct{}

func (noRecords) Held(terms.AccountID, terms.AccountID) uint64 { return 0 }
func (noRecords) Underpriced(terms.AccountID) int              { return 0 }

const testWait = 200 * time.Millisecond

// creditFixture is credit control over one escrow of avail micro-units,
// and a caller the settler authorized for the payer.
type creditFixture struct {
	c              *credit
	payer, settler terms.AccountID
	from           peer.ID
	req            *infer.Request
}

func newCreditFixture(t *testing.T, avail uint64) *creditFixture {
	t.Helper()
	_, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := &creditFixture{settler: terms.AccountOf(sk.Public().(ed25519.PublicKey)), from: peer.ID("caller")}
	f.payer[0] = 1
	escrow := func(_ context.Context, payer, settler terms.AccountID) (uint64, bool, error) {
		return avail, payer == f.payer && settler == f.settler, nil
	}
	f.c = newCredit("test-chain", escrow, noRecords{}, clock.New(), testWait)
	f.req = &infer.Request{Pay: &infer.PayAuth{Payer: f.payer[:], Settler: f.settler[:],
		Sig: ledger.SignPayAuth(sk, "test-chain", []byte(f.from), f.payer)}}
	return f
}

func (f *creditFixture) admit(t *testing.T, worst uint64) (grant, *infer.ErrorFrame) {
	t.Helper()
	return f.c.admit(context.Background(), f.from, f.req, worst)
}

// TestCreditWaitsOnlyForRecordsOwedOnArrival: a call arriving while its
// settler owes a record waits for that record only; a call that finishes
// during the wait (an honest gateway under load always has some) does not
// hold it back. A record that never comes refuses the call 402 unpaid
// after the record wait.
func TestCreditWaitsOnlyForRecordsOwedOnArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newCreditFixture(t, 1_000_000)
		g := grant{payer: f.payer, settler: f.settler}
		rd1, rd2 := terms.Hash32{1}, terms.Hash32{2}
		f.c.served(g, rd1, 10, terms.Hash32{})
		done := make(chan *infer.ErrorFrame, 1)
		go func() { done <- f.c.awaitRecords(context.Background(), f.settler) }()
		synctest.Wait()
		f.c.served(g, rd2, 10, terms.Hash32{}) // finished while the new call waits
		f.c.recorded(&receipt.PaymentRecord{Settler: f.settler, RequestDigest: rd1})
		synctest.Wait()
		select {
		case e := <-done:
			if e != nil {
				t.Fatalf("refused once the record owed on arrival came: %+v", e)
			}
		default:
			t.Fatal("still waiting for a record owed by a call that finished after it arrived")
		}

		go func() { done <- f.c.awaitRecords(context.Background(), f.settler) }() // rd2 is owed now
		time.Sleep(testWait)
		synctest.Wait()
		e := <-done
		if e == nil || e.Status != http.StatusPaymentRequired || e.Code != terms.CodeUnpaid {
			t.Fatalf("a record that never came: %+v, want 402 unpaid", e)
		}
	})
}

// TestCreditReservesCallsInProgress: each admitted call holds its
// worst-case price against the escrow until it ends: a second call the
// escrow cannot also cover is refused while the first runs, admitted once
// the first ends owing nothing, and a call whose final frame is never
// written stops holding the escrow a record wait after it ended.
func TestCreditReservesCallsInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newCreditFixture(t, 20)
		g1, e := f.admit(t, 14)
		if e != nil {
			t.Fatalf("first call: %+v", e)
		}
		if _, e := f.admit(t, 14); e == nil || e.Code != terms.CodePaymentRequired {
			t.Fatalf("second call while the first holds 14 of 20: %+v, want 402 payment_required", e)
		}
		f.c.release(g1)
		g2, e := f.admit(t, 14)
		if e != nil {
			t.Fatalf("call after the first released: %+v", e)
		}
		f.c.finishing(g2)
		if _, e := f.admit(t, 14); e == nil {
			t.Fatal("admitted while the final frame of the previous call is being written")
		}
		time.Sleep(testWait)
		g3, e := f.admit(t, 14)
		if e != nil {
			t.Fatalf("the unwritten call's reservation did not lapse: %+v", e)
		}
		f.c.finishing(g3)
		f.c.served(g3, terms.Hash32{3}, 12, terms.Hash32{}) // written: owed 12 in place of the reservation
		f.c.mu.Lock()
		owed, reserved := f.c.owedByLocked(f.payer, f.settler), f.c.reservedLocked(f.payer, f.settler)
		f.c.mu.Unlock()
		if owed != 12 || reserved != 0 {
			t.Fatalf("after the frame was written: owed %d, reserved %d; want 12 and 0", owed, reserved)
		}
	})
}

// TestCreditRecordBeforeServed: a record that reaches the provider before
// the server notes its call served (the gateway can be that quick) still
// pays for it: the call never becomes a debt.
func TestCreditRecordBeforeServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newCreditFixture(t, 1_000_000)
		g := grant{payer: f.payer, settler: f.settler}
		rd := terms.Hash32{9}
		f.c.recorded(&receipt.PaymentRecord{Settler: f.settler, RequestDigest: rd})
		f.c.served(g, rd, 10, terms.Hash32{})
		if e := f.c.awaitRecords(context.Background(), f.settler); e != nil {
			t.Fatalf("a paid call left a debt: %+v", e)
		}
		// Another call with no record is owed as before.
		f.c.served(g, terms.Hash32{10}, 10, terms.Hash32{})
		if e := f.c.awaitRecords(context.Background(), f.settler); e == nil || e.Code != terms.CodeUnpaid {
			t.Fatalf("an unpaid call: %+v, want 402 unpaid", e)
		}
	})
}
