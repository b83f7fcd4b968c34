package attest

import (
	"bytes"
	"errors"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	att := goodAttestation(t, sessionPub(t))
	b, err := att.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxSize {
		t.Fatalf("encoded attestation is %d bytes, over MaxSize %d", len(b), MaxSize)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !bytes.Equal(got.Report, att.Report) || !bytes.Equal(got.EKCert, att.EKCert) || !bytes.Equal(got.Root, att.Root) {
		t.Fatal("round trip changed the attestation")
	}
	if _, err := Unmarshal(append(b, 0)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("trailing byte: %v, want ErrMalformed", err)
	}
}

// FuzzUnmarshal: decoding never panics, refusals are ErrMalformed, and an
// accepted input is canonical (re-encodes to the same bytes) and verifies
// without panicking.
func FuzzUnmarshal(f *testing.F) {
	pub := sessionPub(f)
	good, err := goodAttestation(f, pub).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{0xa0})
	f.Add([]byte{0xa1, 0x01, 0x67, 's', 'e', 'v', '-', 's', 'n', 'p'})
	p := testPolicy(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		att, err := Unmarshal(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("refusal %v is not ErrMalformed", err)
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
		if _, err := Verify(att, session(pub), p, now); err != nil && Reason(err) == "other" {
			t.Fatalf("Verify refusal without a reason code: %v", err)
		}
	})
}
