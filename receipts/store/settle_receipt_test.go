package store

import (
	"bytes"
	"errors"
	"testing"
)

// TestSettleWithReceiptIsOneWrite: the payment, the debit and the receipt
// land together and survive a restart; a duplicate changes none of them.
func TestSettleWithReceiptIsOneWrite(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.Credit("bob", 1_000_000); err != nil {
		t.Fatal(err)
	}
	rec := payment(t, "bob", 1, 1000, 10, 20)
	nonce := bytes.Repeat([]byte{7}, 16)
	meta := ReceiptMeta{Verified: true, Provider: "p", Model: "m", TimeMs: 1000}
	if err := s.SettleWithReceipt(rec, nonce, []byte("envelope"), meta); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleWithReceipt(rec, nonce, []byte("other"), ReceiptMeta{}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	s.Close()
	s = openStore(t, dir)
	env, got, err := s.GetReceipt(nonce)
	if err != nil || string(env) != "envelope" || !got.Verified {
		t.Fatalf("receipt after restart: %q %+v %v", env, got, err)
	}
	if bal, _ := s.Balance("bob"); bal != 1_000_000-rec.Price {
		t.Fatalf("balance %d, want %d", bal, 1_000_000-rec.Price)
	}
	if _, err := s.GetPayment(rec.RequestDigest); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleWithReceipt(rec, nil, nil, meta); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty nonce: %v", err)
	}
}
