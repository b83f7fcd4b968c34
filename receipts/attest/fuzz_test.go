package attest_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-tdx-guest/testing/testdata"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

func TestMarshalRoundTrip(t *testing.T) {
	att := attesttest.Attestation(t, attesttest.SessionPub(t))
	b, err := att.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > attest.MaxSize {
		t.Fatalf("encoded attestation is %d bytes, over attest.MaxSize %d", len(b), attest.MaxSize)
	}
	got, err := attest.Unmarshal(b)
	if err != nil {
		t.Fatalf("attest.Unmarshal: %v", err)
	}
	if !bytes.Equal(got.Report, att.Report) || !bytes.Equal(got.EKCert, att.EKCert) || !bytes.Equal(got.Root, att.Root) {
		t.Fatal("round trip changed the attestation")
	}
	if _, err := attest.Unmarshal(append(b, 0)); !errors.Is(err, attest.ErrMalformed) {
		t.Fatalf("trailing byte: %v, want attest.ErrMalformed", err)
	}
}

// FuzzUnmarshal: decoding never panics, refusals are ErrMalformed, and an
// accepted input is canonical (re-encodes to the same bytes) and verifies
// without panicking.
func FuzzUnmarshal(f *testing.F) {
	pub := attesttest.SessionPub(f)
	good, err := attesttest.Attestation(f, pub).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	tdx, err := (&attest.Attestation{Kind: attest.KindTDX, Report: testdata.RawQuote}).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tdx)
	f.Add([]byte{0xa0})
	f.Add([]byte{0xa1, 0x01, 0x67, 's', 'e', 'v', '-', 's', 'n', 'p'})
	p := attesttest.Policy(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		att, err := attest.Unmarshal(b)
		if err != nil {
			if !errors.Is(err, attest.ErrMalformed) {
				t.Fatalf("refusal %v is not attest.ErrMalformed", err)
			}
			return
		}
		again, err := att.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatal("accepted a non-canonical encoding")
		}
		if _, err := attest.Verify(att, session(pub), p, now); err != nil && attest.Reason(err) == "other" {
			t.Fatalf("attest.Verify refusal without a reason code: %v", err)
		}
	})
}
