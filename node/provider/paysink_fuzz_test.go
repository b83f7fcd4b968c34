package provider

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// FuzzRecordSinkReceipt: whatever receipt bytes and request digest a
// delivered record carries, the provider's receipt check never panics,
// refuses only with a payment.Refusal carrying a ledger code, and passes a
// record only when its receipt verifies for this machine, is for the very
// request the record names and names the record's payer and settler.
func FuzzRecordSinkReceipt(f *testing.F) {
	m, env, rd := sinkReceiptSeed(f)
	now := time.Now()
	f.Add(env, rd[:])
	f.Add(env, make([]byte, 32))
	f.Add(env[:len(env)/2], rd[:])
	f.Add([]byte{0xa0}, rd[:])

	mock := clock.NewMock()
	mock.Set(now)
	sink := NewRecordSink(nil, nil, m, "", mock)
	if err := sink.checkReceipt(&receipt.PaymentRecord{Provider: m, Receipt: env, RequestDigest: rd}); err != nil {
		f.Fatalf("the genuine receipt refused: %v", err)
	}
	f.Fuzz(func(t *testing.T, rcpt, digest []byte) {
		rec := &receipt.PaymentRecord{Provider: m, Receipt: rcpt}
		copy(rec.RequestDigest[:], digest)
		err := sink.checkReceipt(rec)
		var ref *payment.Refusal
		if err != nil && (!errors.As(err, &ref) || (ref.Code != uint32(ledger.CodeBadReceipt) && ref.Code != uint32(ledger.CodeWrongMachine) &&
			ref.Code != uint32(ledger.CodeRecordMismatch))) {
			t.Fatalf("not a receipt refusal: %v", err)
		}
		if len(rcpt) == 0 {
			if err != nil {
				t.Fatalf("a record without a receipt is the collector's to refuse: %v", err)
			}
			return
		}
		got, verr := receipt.Verify(rcpt, m, now)
		ok := verr == nil && len(got.InputCommitment) == 32 &&
			terms.Hash32(receipt.RequestDigest(got.Nonce, [32]byte(got.InputCommitment), got.ModelID)) == rec.RequestDigest &&
			got.Paid() && bytes.Equal(got.Payer, rec.Payer[:]) && bytes.Equal(got.Settler, rec.Settler[:])
		if ok != (err == nil) {
			t.Fatalf("check %v, but the receipt verifies %v for the record's request", err, ok)
		}
	})
}

// TestRecordSinkRefusesOtherPayer: a record for a call, naming a payer or
// settler other than the receipt's, is refused with CodeRecordMismatch on
// delivery (the chain would never settle it, so it must not clear the
// settler's debt).
func TestRecordSinkRefusesOtherPayer(t *testing.T) {
	m, env, rd := sinkReceiptSeed(t)
	sink := NewRecordSink(nil, nil, m, "", clock.New())
	for name, rec := range map[string]*receipt.PaymentRecord{
		"payer":   {Provider: m, Receipt: env, RequestDigest: rd, Payer: terms.AccountID{1}},
		"settler": {Provider: m, Receipt: env, RequestDigest: rd, Settler: terms.AccountID{1}},
	} {
		var ref *payment.Refusal
		if err := sink.checkReceipt(rec); !errors.As(err, &ref) || ref.Code != uint32(ledger.CodeRecordMismatch) {
			t.Errorf("another %s: %v, want a CodeRecordMismatch refusal", name, err)
		}
	}
}

// sinkReceiptSeed is a machine and a genuine receipt envelope it signed
// for a call paid by the zero payer under the zero settler, with the
// digest of its request.
func sinkReceiptSeed(tb testing.TB) (identity.MachineID, []byte, [32]byte) {
	tb.Helper()
	m, sess, pid := testSession(tb)
	now := time.Now()
	r := &receipt.Receipt{ModelID: make([]byte, 32), Engine: "embedded", MachineID: m[:], ProviderPeer: []byte(pid),
		Nonce: make([]byte, receipt.NonceSize), InputCommitment: make([]byte, 32), OutputHash: make([]byte, 32),
		Units: terms.Units{InputTokens: 3, OutputTokens: 4}, FinishReason: "stop", TimeMs: now.UnixMilli(),
		Payer: make([]byte, receipt.AccountSize), Settler: make([]byte, receipt.AccountSize)} // the zero accounts the records name
	env, err := receipt.Sign(sess, r)
	if err != nil {
		tb.Fatal(err)
	}
	return m, env, receipt.RequestDigest(r.Nonce, [32]byte(r.InputCommitment), r.ModelID)
}

// BenchmarkRecordSinkReceipt is the receipt check a provider adds to each
// delivered record (the session certificate cached, as for every record
// after a session's first).
func BenchmarkRecordSinkReceipt(b *testing.B) {
	m, env, rd := sinkReceiptSeed(b)
	sink := NewRecordSink(nil, nil, m, "", clock.New())
	rec := &receipt.PaymentRecord{Provider: m, Receipt: env, RequestDigest: rd}
	for b.Loop() {
		if err := sink.checkReceipt(rec); err != nil {
			b.Fatal(err)
		}
	}
}
