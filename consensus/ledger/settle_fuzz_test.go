package ledger_test

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// FuzzDecodeSettlement: any input either decodes to a settlement within
// the limits whose canonical encoding is exactly the input, or is refused
// as malformed or too large.
func FuzzDecodeSettlement(f *testing.F) {
	gw, _ := ledgertest.Signer(testChain, "gateway", 0)
	rec := ledgertest.Signed(f, gw, receipt.PaymentRecord{Payer: gw.Account(), RequestDigest: terms.Hash32{1}, Price: 3, Receipt: []byte{1, 2}})
	for _, s := range []ledger.Settlement{{Records: []receipt.PaymentRecord{rec}}, {Records: []receipt.PaymentRecord{rec, rec}}, {}} {
		b, err := cborx.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xa1, 0x01, 0x80})
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := ledger.DecodeSettlement(raw)
		if err != nil {
			if c := ledger.CodeOf(err); c != ledger.CodeMalformed && c != ledger.CodeTooLarge {
				t.Fatalf("decode error with code %v: %v", c, err)
			}
			return
		}
		if n := len(s.Records); n == 0 || n > ledger.MaxRecordsPerTx {
			t.Fatalf("accepted %d records", n)
		}
		for i, r := range s.Records {
			if r.Price == 0 || len(r.Receipt) > receipt.MaxReceiptBytes {
				t.Fatalf("accepted record %d: price %d, receipt %d bytes", i, r.Price, len(r.Receipt))
			}
		}
		re, err := cborx.Marshal(s)
		if err != nil || !bytes.Equal(re, raw) {
			t.Fatalf("accepted non-canonical settlement %x", raw)
		}
	})
}

// FuzzRecordSigning: for any record, the settler's signature verifies on
// its chain, survives an encode/decode round trip, does not depend on the
// receipt envelope, and fails for another chain, another price or another
// settler.
func FuzzRecordSigning(f *testing.F) {
	gw, _ := ledgertest.Signer(testChain, "gateway", 0)
	other, _ := ledgertest.Signer(testChain, "other", 0)
	seed, err := cborx.Marshal(receipt.PaymentRecord{Payer: gw.Account(), RequestDigest: terms.Hash32{1}, Price: 3, Units: 9, Time: 5, ExpiryHeight: 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, "tenzro-unit")
	f.Add([]byte{0xa0}, "")
	f.Fuzz(func(t *testing.T, raw []byte, chain string) {
		var rec receipt.PaymentRecord
		if cborx.Unmarshal(raw, ledger.MaxTxBytes, &rec) != nil {
			return
		}
		s := ledger.NewSigner(ledgertest.SeedKey("gateway", 0), chain)
		if err := s.SignRecord(&rec); err != nil {
			t.Fatal(err)
		}
		if rec.Settler != gw.Account() {
			t.Fatalf("settler %s, want the signer", rec.Settler)
		}
		if err := rec.VerifySig(chain); err != nil {
			t.Fatalf("fresh signature: %v", err)
		}
		b, err := cborx.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		var back receipt.PaymentRecord
		if err := cborx.UnmarshalCanonical(b, ledger.MaxTxBytes, &back); err != nil {
			t.Fatalf("round trip: %v", err)
		}
		back.Receipt = append(back.Receipt, 7)
		if err := back.VerifySig(chain); err != nil {
			t.Fatalf("after round trip and a changed receipt envelope: %v", err)
		}
		if rec.VerifySig(chain+"x") == nil {
			t.Fatal("signature verifies for another chain")
		}
		bad := back
		bad.Price++
		if bad.VerifySig(chain) == nil {
			t.Fatal("signature verifies for another price")
		}
		bad = back
		bad.Settler = other.Account()
		if bad.VerifySig(chain) == nil {
			t.Fatal("signature verifies for another settler")
		}
	})
}
