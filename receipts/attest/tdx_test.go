package attest_test

import (
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/google/go-tdx-guest/testing/testdata"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

// recordedAt is inside the validity of the PCK chain in go-tdx-guest's
// recorded production quote (Sapphire Rapids).
var recordedAt = time.Date(2023, time.July, 1, 1, 0, 0, 0, time.UTC)

func recordedQuote() *attest.Attestation {
	return &attest.Attestation{Kind: attest.KindTDX, Report: append([]byte(nil), testdata.RawQuote...)}
}

func TestTDXRecordedQuoteChainVerifiesButBindsAnotherKey(t *testing.T) {
	// The recorded quote is genuine (its chain and signatures verify, or the
	// refusal would be "chain"), and its REPORT_DATA binds no key of ours.
	pub := attesttest.SessionPub(t)
	_, err := attest.Verify(recordedQuote(), attest.Session{Pub: pub, NotAfter: recordedAt.Add(time.Hour)}, &attest.Policy{}, recordedAt)
	if !errors.Is(err, attest.ErrWrongKey) {
		t.Fatalf("recorded TDX quote: %v, want ErrWrongKey", err)
	}
}

func TestTDXTamperedQuoteRefused(t *testing.T) {
	att := recordedQuote()
	att.Report[0x30+16] ^= 1 // inside the TD quote body, which the QE signed
	_, err := attest.Verify(att, attest.Session{Pub: attesttest.SessionPub(t), NotAfter: recordedAt.Add(time.Hour)}, &attest.Policy{}, recordedAt)
	if attest.Reason(err) != "chain" {
		t.Fatalf("tampered TDX quote: %v, want a chain refusal", err)
	}
}

func TestTDXQuoteAfterChainExpiryRefused(t *testing.T) {
	late := time.Date(2053, time.July, 1, 1, 0, 0, 0, time.UTC)
	_, err := attest.Verify(recordedQuote(), attest.Session{Pub: attesttest.SessionPub(t), NotAfter: late.Add(time.Hour)}, &attest.Policy{}, late)
	if attest.Reason(err) != "chain" {
		t.Fatalf("TDX quote past its chain: %v, want a chain refusal", err)
	}
}

func TestTDXQuoteUnderAnotherRootRefused(t *testing.T) {
	ca, _ := attesttest.ForeignCA(t)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err := attest.Verify(recordedQuote(), attest.Session{Pub: attesttest.SessionPub(t), NotAfter: recordedAt.Add(time.Hour)},
		&attest.Policy{TDXRoots: roots}, recordedAt)
	if !errors.Is(err, attest.ErrChain) {
		t.Fatalf("TDX quote under a root that is not Intel's: %v, want ErrChain", err)
	}
}
