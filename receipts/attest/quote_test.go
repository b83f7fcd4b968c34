package attest_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-sev-guest/abi"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

// fakeQuote asks go-sev-guest's fake quote provider for a report binding pub.
func fakeQuote(t *testing.T, pub []byte) []byte {
	t.Helper()
	qp := attesttest.NewQuoteProvider(t, attesttest.ReportOpts{TCB: attesttest.GoodTCB})
	qp.Bind(pub)
	raw, err := qp.GetRawQuote(attest.ReportData(pub))
	if err != nil {
		t.Fatalf("fake GetRawQuote: %v", err)
	}
	return raw
}

func TestFromSNPQuoteVerifies(t *testing.T) {
	pub := attesttest.SessionPub(t)
	att, err := attest.FromSNPQuote(fakeQuote(t, pub), nil)
	if err != nil {
		t.Fatalf("attest.FromSNPQuote: %v", err)
	}
	s := attesttest.Signer(t)
	if !bytes.Equal(att.EKCert, s.Vcek.Raw) || !bytes.Equal(att.Intermediate, s.Ask.Raw) || !bytes.Equal(att.Root, s.Ark.Raw) {
		t.Fatal("the quote's certificate table did not become the carried chain")
	}
	res, err := attest.Verify(att, session(pub), attesttest.Policy(t), now)
	if err != nil {
		t.Fatalf("attest.Verify of the device's quote: %v", err)
	}
	if !bytes.Equal(res.SessionPub, pub) {
		t.Fatal("result does not name the bound session key")
	}
	if !res.NotAfter.Equal(session(pub).NotAfter) {
		t.Fatalf("result NotAfter %s, want the session's %s", res.NotAfter, session(pub).NotAfter)
	}
}

func TestFromSNPQuoteWithoutTable(t *testing.T) {
	pub := attesttest.SessionPub(t)
	report := fakeQuote(t, pub)[:abi.ReportSize]
	if _, err := attest.FromSNPQuote(report, nil); !errors.Is(err, attest.ErrMalformed) {
		t.Fatalf("report without a table or a configured VCEK: %v, want attest.ErrMalformed", err)
	}
	att, err := attest.FromSNPQuote(report, attesttest.Signer(t).Vcek.Raw)
	if err != nil {
		t.Fatalf("report with a configured VCEK: %v", err)
	}
	if att.Intermediate != nil || att.Root != nil {
		t.Fatal("no table, yet a carried ASK or ARK")
	}
	if _, err := attest.Verify(att, session(pub), attesttest.Policy(t), now); err != nil {
		t.Fatalf("attest.Verify with the configured VCEK: %v", err)
	}
}

func TestFromSNPQuoteRefusesShortInput(t *testing.T) {
	if _, err := attest.FromSNPQuote(make([]byte, 100), nil); !errors.Is(err, attest.ErrMalformed) {
		t.Fatalf("100-byte quote: %v, want attest.ErrMalformed", err)
	}
}

// FuzzFromSNPQuote: any bytes give an attestation of valid shape or
// ErrMalformed, never a panic.
func FuzzFromSNPQuote(f *testing.F) {
	pub := attesttest.SessionPub(f)
	qp := attesttest.NewQuoteProvider(f, attesttest.ReportOpts{TCB: attesttest.GoodTCB})
	qp.Bind(pub)
	raw, err := qp.GetRawQuote(attest.ReportData(pub))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add(raw[:abi.ReportSize])
	f.Add(raw[:abi.ReportSize+10])
	f.Fuzz(func(t *testing.T, b []byte) {
		att, err := attest.FromSNPQuote(b, nil)
		if err != nil {
			if !errors.Is(err, attest.ErrMalformed) {
				t.Fatalf("refusal %v is not attest.ErrMalformed", err)
			}
			return
		}
		enc, err := att.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if len(enc) <= attest.MaxSize {
			if _, err := attest.Unmarshal(enc); err != nil {
				t.Fatalf("built attestation does not decode: %v", err)
			}
		}
	})
}
