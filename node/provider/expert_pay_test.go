package provider

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"math"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
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

func TestExpertRecord(t *testing.T) {
	payer := terms.AccountID{0xaa}
	a := expert.HolderUsage{Holder: "holder-a", Machine: [32]byte{1}, Price: 3, ExpertTokens: 40, Receipts: [][]byte{[]byte("r1"), []byte("r2")}}
	free := expert.HolderUsage{Holder: "holder-b", Machine: [32]byte{2}, Price: 0, ExpertTokens: 10, Receipts: [][]byte{[]byte("r3")}}
	idle := expert.HolderUsage{Holder: "holder-c", Machine: [32]byte{3}, Price: 9, Retired: 2}
	for _, u := range []expert.HolderUsage{free, idle} {
		if rec, err := expertRecord(payer, u); rec != nil || err != nil {
			t.Fatalf("a record for %s, which did no paid work: %+v %v", u.Holder, rec, err)
		}
	}
	rec, err := expertRecord(payer, a)
	if err != nil || rec == nil {
		t.Fatalf("holder a: %+v %v", rec, err)
	}
	r := *rec
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
	if _, err := expertRecord(payer, huge); err == nil {
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
	got := r.payCall(context.Background(), [32]byte{}, tallyOf(t, a, free, idle))
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

// signChecker is the outbox's side of ExpertPayments for TestBindingBeforeSign:
// at each signature it reads what the bindings store holds by then.
type signChecker struct {
	t        *testing.T
	bindings *expert.SampleStore
	sampled  map[peer.ID][][32]byte
	signed   int
}

func (s *signChecker) Payer() terms.AccountID { return terms.AccountID{0xaa} }

func (s *signChecker) Sign(_ context.Context, rec *receipt.PaymentRecord, holder peer.ID) error {
	s.signed++
	for _, h := range s.sampled[holder] {
		name, ok, err := s.bindings.Find(h)
		if err != nil || !ok {
			s.t.Fatalf("record of %s signed before the binding of its sampled receipt %x (%v)", holder, h[:4], err)
		}
		data, _ := s.bindings.Get(name)
		b, err := expert.DecodeBinding(data)
		if err != nil || b.Payer != rec.Payer || b.RequestDigest != rec.RequestDigest || ledger.ReceiptsHash(b.ReceiptHashes) != rec.QuoteDigest {
			s.t.Fatalf("binding %+v (%v) does not name the record being signed", b, err)
		}
	}
	return nil
}

// TestBindingBeforeSign: a holder's record is signed only once each of
// its sampled receipts is bound to it in the model's store; a holder with
// nothing sampled, or a model whose evidence is not disputed, leaves no
// binding.
func TestBindingBeforeSign(t *testing.T) {
	store, err := expert.OpenSampleStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	model := [32]byte{7}
	r1, r2, r3 := []byte("receipt 1"), []byte("receipt 2"), []byte("receipt 3")
	a := expert.HolderUsage{Holder: "holder-a", Machine: [32]byte{1}, Price: 3, Batches: 2, ExpertTokens: 40,
		Receipts: [][]byte{r1, r2}, Sampled: [][32]byte{sha256.Sum256(r2)}}
	b := expert.HolderUsage{Holder: "holder-b", Machine: [32]byte{2}, Price: 2, Batches: 1, ExpertTokens: 10, Receipts: [][]byte{r3}}
	pay := &signChecker{t: t, bindings: store, sampled: map[peer.ID][][32]byte{a.Holder: a.Sampled}}
	r := &remoteExperts{p: &Provider{d: Deps{ExpertPayments: pay, Log: slog.New(slog.DiscardHandler)}},
		disputers: map[[32]byte]*ExpertDisputer{model: {cfg: ExpertDisputerConfig{Bindings: store}}}}
	got := r.payCall(context.Background(), model, tallyOf(t, a, b))
	if pay.signed != 2 || got[0].Paid != 120 || got[1].Paid != 20 {
		t.Fatalf("%d records signed, parts %+v", pay.signed, got)
	}
	names, _ := store.List()
	if len(names) != 1 {
		t.Fatalf("%d bindings kept, want 1 (holder a's sampled receipt)", len(names))
	}
	r.payHolders(context.Background(), [32]byte{8}, tallyOf(t, a)) // a model not disputed
	if names, _ = store.List(); len(names) != 1 || pay.signed != 3 {
		t.Fatalf("%d bindings after a model without a store, %d signed", len(names), pay.signed)
	}
}
