package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// FuzzStreamAccrual: for any rate, deposit and span the accrual is the
// exact floor of rate × elapsed / 3600 capped at the deposit, never
// decreases as time passes (so a claim computed from the open time never
// takes back what an earlier one paid) and is 0 before any time passed.
func FuzzStreamAccrual(f *testing.F) {
	f.Add(uint64(3600), uint64(100), int64(0), int64(50), int64(1))
	f.Add(uint64(7_200_001), uint64(1<<40), int64(1_767_225_600), int64(15), int64(3))
	f.Add(^uint64(0), ^uint64(0), int64(-5), int64(1<<62), int64(1<<62))
	f.Add(uint64(1), uint64(1), int64(10), int64(-3), int64(0))
	f.Fuzz(func(t *testing.T, rate, deposit uint64, open, elapsed, more int64) {
		if elapsed < 0 || more < 0 || open > (1<<62) || open < -(1<<62) || elapsed > 1<<61 || more > 1<<61 {
			return // block times are unix seconds; keep open+elapsed+more from overflowing int64
		}
		t1, t2 := open+elapsed, open+elapsed+more
		a1 := ledger.StreamAccrual(rate, deposit, open, t1)
		a2 := ledger.StreamAccrual(rate, deposit, open, t2)
		if want := accrual(rate, deposit, open, t1); a1 != want {
			t.Fatalf("accrual(rate %d, deposit %d, elapsed %d) = %d, want %d", rate, deposit, elapsed, a1, want)
		}
		if a1 > deposit || a2 < a1 {
			t.Fatalf("accrual %d then %d (deposit %d): over the deposit or decreasing", a1, a2, deposit)
		}
		if elapsed == 0 && a1 != 0 {
			t.Fatalf("accrual %d with no time elapsed", a1)
		}
		if ledger.StreamAccrual(rate, deposit, open, open-1) != 0 {
			t.Fatal("accrual before the open")
		}
	})
}
