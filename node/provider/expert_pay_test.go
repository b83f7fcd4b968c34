package provider

import (
	"context"
	"crypto/sha256"
	"math"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/infer"
)

// tallyOf builds a call's tally by hand.
func tallyOf(t *testing.T, uses ...expert.HolderUsage) *expert.Tally {
	t.Helper()
	tl := new(expert.Tally)
	for _, u := range uses {
		tl.Record(u)
	}
	return tl
}

func TestExpertRecords(t *testing.T) {
	payer := ledger.AccountID{0xaa}
	a := expert.HolderUsage{Holder: "holder-a", Machine: [32]byte{1}, Price: 3, ExpertTokens: 40, Receipts: [][]byte{[]byte("r1"), []byte("r2")}}
	free := expert.HolderUsage{Holder: "holder-b", Machine: [32]byte{2}, Price: 0, ExpertTokens: 10, Receipts: [][]byte{[]byte("r3")}}
	idle := expert.HolderUsage{Holder: "holder-c", Machine: [32]byte{3}, Price: 9, Retired: 2}
	recs, holders, err := ExpertRecords(payer, tallyOf(t, a, free, idle))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || holders[0] != "holder-a" {
		t.Fatalf("records for %v, want holder-a only (the others did no paid work)", holders)
	}
	r := recs[0]
	rh := a.ReceiptsHash()
	if r.Price != 120 || r.Units != 40 || r.Payer != payer || r.Provider != a.Machine || r.QuoteDigest != rh ||
		r.RequestDigest != ExpertRecordDigest(rh, a.Machine) || r.ReceiptHash != sha256.Sum256([]byte("r1")) {
		t.Fatalf("record %+v", r)
	}
	other := a
	other.Receipts = [][]byte{[]byte("r1"), []byte("r9")}
	if ExpertRecordDigest(other.ReceiptsHash(), a.Machine) == r.RequestDigest || ExpertRecordDigest(rh, [32]byte{2}) == r.RequestDigest {
		t.Fatal("two calls or two holders share a request digest")
	}
	huge := a
	huge.Price, huge.ExpertTokens = math.MaxUint64/2, 3
	if _, _, err := ExpertRecords(payer, tallyOf(t, huge)); err == nil {
		t.Fatal("a price overflowing 64 bits was accepted")
	}
}

// TestPayCallReasons: off chain every holder of a call is reported with
// its work and paid 0, saying why: off chain, a free price, or no
// verified work.
func TestPayCallReasons(t *testing.T) {
	r := &remoteExperts{p: &Provider{}}
	a := expert.HolderUsage{Holder: "holder-a", Machine: [32]byte{1}, Price: 3, Batches: 2, ExpertTokens: 40, Receipts: [][]byte{[]byte("r1")}}
	free := expert.HolderUsage{Holder: "holder-b", Machine: [32]byte{2}, Price: 0, Batches: 1, ExpertTokens: 10, Receipts: [][]byte{[]byte("r3")}}
	idle := expert.HolderUsage{Holder: "holder-c", Machine: [32]byte{3}, Price: 9, Retired: 2}
	got := r.payCall(context.Background(), tallyOf(t, a, free, idle))
	want := []string{infer.UnpaidOffChain, infer.UnpaidFree, infer.UnpaidNoWork}
	if len(got) != len(want) {
		t.Fatalf("%d entries", len(got))
	}
	for i, e := range got {
		if e.Unpaid != want[i] || e.Paid != 0 || e.Record != nil {
			t.Errorf("entry %d: %+v, want unpaid %q", i, e, want[i])
		}
	}
	if got[0].ExpertTokens != 40 || got[0].Batches != 2 || got[0].Price != 3 || string(got[0].Holder) != "holder-a" || got[0].Machine[0] != 1 {
		t.Fatalf("holder a reported as %+v", got[0])
	}
	if n, ok := infer.ExpertTokensOf(got); !ok || n != 50 {
		t.Fatalf("total %d", n)
	}
}
