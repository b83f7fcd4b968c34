package attest

import (
	"crypto/sha512"
	"fmt"

	"github.com/google/go-sev-guest/abi"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// Kinds of attestation.
const (
	KindSEVSNP = "sev-snp" // AMD SEV-SNP report + VCEK/VLEK certificate
	KindTDX    = "tdx"     // Intel TDX quote v4; the PCK chain is inside the quote
	// KindTest ("test", testkind.go) is TEST-ONLY, for devnets.
)

// MaxSize bounds an encoded attestation: a 1184-byte report and three DER
// certificates (AMD's RSA-4096 ASK and ARK are about 1.6 KiB each), or a
// TDX quote with its PCK chain (about 5 KiB).
const MaxSize = 8 << 10

// bindingDomain separates the session-key binding from any other use of
// REPORT_DATA; the trailing NUL ends the domain before the key bytes.
const bindingDomain = "tenzro/attest/session-key/1\x00"

// Attestation is what a provider announces. Intermediate and Root are
// optional: trust comes from the verifier's configured roots, and when they
// are carried they must be exactly those roots.
type Attestation struct {
	Kind         string `cbor:"1,keyasint"`           // KindSEVSNP
	Report       []byte `cbor:"2,keyasint"`           // raw SEV-SNP report, abi.ReportSize bytes
	EKCert       []byte `cbor:"3,keyasint"`           // DER of the VCEK or VLEK certificate (the report says which)
	Intermediate []byte `cbor:"4,keyasint,omitempty"` // DER of the ASK (VCEK) or ASVK (VLEK)
	Root         []byte `cbor:"5,keyasint,omitempty"` // DER of the ARK
}

// ReportData returns the REPORT_DATA that binds sessionPub (PKIX DER).
func ReportData(sessionPub []byte) [64]byte {
	h := sha512.New()
	h.Write([]byte(bindingDomain))
	h.Write(sessionPub)
	var out [64]byte
	copy(out[:], h.Sum(nil))
	return out
}

// Marshal returns the attestation's deterministic CBOR encoding.
func (a *Attestation) Marshal() ([]byte, error) {
	b, err := cborx.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("attest: encode: %w", err)
	}
	return b, nil
}

// Unmarshal decodes an attestation from its canonical encoding and checks
// its shape (kind, report size, certificate present). It does not verify it.
func Unmarshal(b []byte) (*Attestation, error) {
	return cborx.UnmarshalChecked(b, MaxSize, ErrMalformed, (*Attestation).checkShape)
}

func (a *Attestation) checkShape() error {
	if a.Kind == KindTest {
		return a.checkTestShape()
	}
	if a.Kind == KindTDX {
		if len(a.Report) == 0 || len(a.EKCert) > 0 || len(a.Intermediate) > 0 || len(a.Root) > 0 {
			return fmt.Errorf("%w: a tdx attestation is a quote alone", ErrMalformed)
		}
		return nil
	}
	if a.Kind != KindSEVSNP {
		return fmt.Errorf("%w: kind %q (want %q, %q or %q)", ErrMalformed, a.Kind, KindSEVSNP, KindTDX, KindTest)
	}
	if len(a.Report) != abi.ReportSize {
		return fmt.Errorf("%w: report is %d bytes (want %d)", ErrMalformed, len(a.Report), abi.ReportSize)
	}
	if len(a.EKCert) == 0 {
		return fmt.Errorf("%w: no endorsement key certificate", ErrMalformed)
	}
	return nil
}
