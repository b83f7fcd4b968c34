package provider

import (
	"errors"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

// FuzzDecodeAttestation: whatever an attestation file holds gives an
// attestation that re-encodes and decodes, or an error, never a panic.
func FuzzDecodeAttestation(f *testing.F) {
	pub := attesttest.SessionPub(f)
	enc, err := attesttest.Attestation(f, pub).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	qp := attesttest.NewQuoteProvider(f, attesttest.ReportOpts{TCB: attesttest.GoodTCB})
	qp.Bind(pub)
	raw, err := qp.GetRawQuote(attest.ReportData(pub))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	f.Add(raw)
	f.Add([]byte("not an attestation"))
	f.Fuzz(func(t *testing.T, b []byte) {
		att, err := decodeAttestation(b, nil)
		if err != nil {
			if !errors.Is(err, attest.ErrMalformed) {
				t.Fatalf("refusal %v is not attest.ErrMalformed", err)
			}
			return
		}
		if att.Kind != attest.KindSEVSNP && att.Kind != attest.KindTDX {
			t.Fatalf("decoded kind %q", att.Kind)
		}
	})
}
