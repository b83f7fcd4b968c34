package provider

import (
	"crypto/sha256"
	"math"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/expert"
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
