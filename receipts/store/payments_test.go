package store

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/receipt"
)

func TestPaymentsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.Credit("alice", 1000); err != nil {
		t.Fatal(err)
	}
	if err := s.Credit("bob", 50); err != nil {
		t.Fatal(err)
	}
	// Settled out of time order; bob's record must not show in alice's
	// list.
	times := []int64{1 << 40, 5, 100, 1 << 33, 0}
	var settled []*receipt.Bill
	var spent uint64
	for i, tm := range times {
		rec := payment(t, "alice", i, tm, 10, uint64(i+1))
		if err := s.Settle(rec); err != nil {
			t.Fatalf("Settle %d: %v", i, err)
		}
		settled = append(settled, rec)
		spent += rec.Price
	}
	bobRec := payment(t, "bob", 0, 150, 1, 1)
	if err := s.PutPayment(bobRec); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, dir)
	if bal, err := s.Balance("alice"); err != nil || bal != 1000-spent {
		t.Fatalf("alice's balance %d, %v; want %d", bal, err, 1000-spent)
	}
	if bal, err := s.Balance("bob"); err != nil || bal != 50 {
		t.Fatalf("PutPayment debited bob: %d, %v", bal, err)
	}
	for i, want := range settled {
		got, err := s.GetPayment(want.RequestDigest)
		if err != nil || !reflect.DeepEqual(got, want) || got.Digest() != want.Digest() {
			t.Fatalf("record %d after restart: %+v, %v", i, got, err)
		}
	}
	list, err := s.ListPayments("alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	wantOrder := []int{4, 1, 2, 3, 0} // indices of the times sorted
	if len(list) != len(wantOrder) {
		t.Fatalf("listed %d records, want %d", len(list), len(wantOrder))
	}
	for i, idx := range wantOrder {
		if !reflect.DeepEqual(list[i], settled[idx]) {
			t.Fatalf("list[%d] has time %d, want %d", i, list[i].TimeMs, settled[idx].TimeMs)
		}
	}
	latest, err := s.ListPayments("alice", 2)
	if err != nil || len(latest) != 2 || latest[0].TimeMs != 1<<33 || latest[1].TimeMs != 1<<40 {
		t.Fatalf("the 2 latest: %v (%d records)", err, len(latest))
	}
	if l, err := s.ListPayments("bob", 10); err != nil || len(l) != 1 || !reflect.DeepEqual(l[0], bobRec) {
		t.Fatalf("bob's list: %v %v", l, err)
	}
	if l, err := s.ListPayments("carol", 10); err != nil || len(l) != 0 {
		t.Fatalf("carol's list: %v %v", l, err)
	}
	if _, err := s.GetPayment(make([]byte, 32)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown digest: %v", err)
	}
}

func TestSettleRefusals(t *testing.T) {
	s := openStore(t, t.TempDir())
	rec := payment(t, "alice", 1, 10, 10, 10) // price 2*10 + 5*10 = 70
	if rec.Price != 70 {
		t.Fatalf("price %d", rec.Price)
	}
	if err := s.Credit("alice", 69); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(rec); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("overdraft: %v", err)
	}
	if _, err := s.GetPayment(rec.RequestDigest); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused Settle stored its record: %v", err)
	}
	if l, _ := s.ListPayments("alice", 10); len(l) != 0 {
		t.Fatalf("a refused Settle indexed its record")
	}
	if err := s.Credit("alice", 71); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(rec); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(rec); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("second Settle of one request: %v", err)
	}
	if err := s.PutPayment(rec); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("PutPayment of a settled request: %v", err)
	}
	if bal, _ := s.Balance("alice"); bal != 70 {
		t.Fatalf("balance %d after one settlement of 70 from 140", bal)
	}
	bad := payment(t, "alice", 2, 10, 1, 1)
	bad.Price++
	if err := s.Settle(bad); !errors.Is(err, ErrInvalid) || !errors.Is(err, receipt.ErrInvalidBill) {
		t.Fatalf("inconsistent record: %v", err)
	}
	if err := s.Settle(nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil record: %v", err)
	}
	if bal, _ := s.Balance("alice"); bal != 70 {
		t.Fatalf("refusals changed the balance to %d", bal)
	}
}

func TestCreditDebit(t *testing.T) {
	s := openStore(t, t.TempDir())
	if bal, err := s.Balance("new"); err != nil || bal != 0 {
		t.Fatalf("fresh account: %d, %v", bal, err)
	}
	if err := s.Credit("a", math.MaxUint64-1); err != nil {
		t.Fatal(err)
	}
	if err := s.Credit("a", 2); !errors.Is(err, ErrOverflow) {
		t.Fatalf("overflowing credit: %v", err)
	}
	if err := s.Credit("a", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Debit("a", math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	if err := s.Debit("a", 1); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("debit of an empty account: %v", err)
	}
	if bal, _ := s.Balance("a"); bal != 0 {
		t.Fatalf("balance %d", bal)
	}
	for _, acct := range []string{"", "\xff", string(make([]byte, MaxAccountLen+1))} {
		if err := s.Credit(acct, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("account %q: %v", acct, err)
		}
	}
}

// TestConcurrentSettleNeverOverdraws races settlements and debits on one
// account, round after round: exactly what the funds allow succeeds.
func TestConcurrentSettleNeverOverdraws(t *testing.T) {
	s := openStore(t, t.TempDir())
	const rounds, settles, debits, afford = 20, 24, 4, 10
	price := payment(t, "x", 0, 0, 0, 10).Price // 50
	for r := range rounds {
		acct := fmt.Sprintf("buyer-%d", r)
		if err := s.Credit(acct, afford*price); err != nil {
			t.Fatal(err)
		}
		recs := make([]*receipt.Bill, settles)
		for i := range recs {
			recs[i] = payment(t, acct, i, int64(i), 0, 10)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, settles+debits)
		for i := range settles + debits {
			wg.Go(func() {
				<-start
				if i < settles {
					errs[i] = s.Settle(recs[i])
				} else {
					errs[i] = s.Debit(acct, price)
				}
			})
		}
		close(start)
		wg.Wait()

		settled, ok := 0, 0
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
				if i < settles {
					settled++
				}
			case !errors.Is(err, ErrInsufficientFunds):
				t.Fatalf("round %d: unexpected error: %v", r, err)
			}
		}
		if ok != afford {
			t.Fatalf("round %d: %d of %d payments of %d succeeded on a balance of %d", r, ok, settles+debits, price, afford*price)
		}
		if bal, _ := s.Balance(acct); bal != 0 {
			t.Fatalf("round %d: balance %d, want 0", r, bal)
		}
		if l, _ := s.ListPayments(acct, 0); len(l) != settled {
			t.Fatalf("round %d: %d records listed, %d settled", r, len(l), settled)
		}
	}
}
