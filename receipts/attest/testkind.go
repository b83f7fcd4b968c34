package attest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"
	"time"
)

// KindTest is a TEST-ONLY attestation: a software "device" key certified
// by a test root stands in for the vendor's chain so that the `tee` level
// can be tried on a devnet without SEV-SNP or TDX hardware. It proves
// nothing about confidentiality. It verifies only under a Policy whose
// TestRoot is that root, and such a policy trusts nothing else: a node
// that trusts real roots (AMD's embedded ones by default, or configured
// ones) never accepts it.
const KindTest = "test"

// Sizes of a test attestation's fields: Report is the REPORT_DATA and the
// device's signature over it; EKCert the device's public key; Intermediate
// the root's signature over it; Root the root's public key.
const (
	testReportSize = 64 + ed25519.SignatureSize
	testCertSize   = ed25519.PublicKeySize
	testICASize    = ed25519.SignatureSize
	testRootSize   = ed25519.PublicKeySize
)

// Domains of the test root's and the device's signatures, so neither
// signs anything a real protocol message could be mistaken for.
const (
	testCertDomain   = "tenzro/attest/TEST-ONLY/device/1\x00"
	testReportDomain = "tenzro/attest/TEST-ONLY/report/1\x00"
)

// TestMeasurementDomain prefixes the device key in a test attestation's
// "measurement" (SHA-384 of it): there is no launched image to measure.
const TestMeasurementDomain = "tenzro/attest/TEST-ONLY/measurement/1\x00"

func (a *Attestation) checkTestShape() error {
	if len(a.Report) != testReportSize || len(a.EKCert) != testCertSize || len(a.Intermediate) != testICASize || len(a.Root) != testRootSize {
		return fmt.Errorf("%w: a test attestation is a %d-byte report, %d-byte device key, %d-byte certification and %d-byte root (got %d, %d, %d, %d)",
			ErrMalformed, testReportSize, testCertSize, testICASize, testRootSize, len(a.Report), len(a.EKCert), len(a.Intermediate), len(a.Root))
	}
	return nil
}

// verifyTest checks a test attestation: refused outright without a test
// root (ErrTestRoot, which is also an ErrChain: the verifier's trust, not
// the sender's fault), then the binding, expiry and both signatures.
func verifyTest(att *Attestation, session Session, p *Policy, now time.Time) (*Result, error) {
	if len(p.TestRoot) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: %w", ErrChain, ErrTestRoot)
	}
	want := ReportData(session.Pub)
	if subtle.ConstantTimeCompare(att.Report[:64], want[:]) != 1 {
		return nil, ErrWrongKey
	}
	if !now.Before(session.NotAfter) {
		return nil, fmt.Errorf("%w: %w: session certificate expired at %s", ErrStale, ErrSessionExpired,
			session.NotAfter.UTC().Format(time.RFC3339))
	}
	if !bytes.Equal(att.Root, p.TestRoot) {
		return nil, fmt.Errorf("%w: test attestation under another test root", ErrChain)
	}
	if !ed25519.Verify(p.TestRoot, append([]byte(testCertDomain), att.EKCert...), att.Intermediate) {
		return nil, fmt.Errorf("%w: the test root did not certify the test device", ErrChain)
	}
	if !ed25519.Verify(ed25519.PublicKey(att.EKCert), append([]byte(testReportDomain), att.Report[:64]...), att.Report[64:]) {
		return nil, fmt.Errorf("%w: test report signature", ErrChain)
	}
	m := sha512.Sum384(append([]byte(TestMeasurementDomain), att.EKCert...))
	return &Result{
		Kind: KindTest, Signer: "TEST-DEVICE", Measurement: m[:], ProductLine: "TEST-ONLY",
		SessionPub: bytes.Clone(session.Pub), NotAfter: session.NotAfter,
	}, nil
}

// TestDevice is a file-based TEST-ONLY attestation device: a key the test
// root certified, which "attests" any session key it is asked to.
type TestDevice struct {
	key  ed25519.PrivateKey
	root ed25519.PublicKey
	cert []byte // the root's signature over the device key
}

// NewTestDevice makes a device key certified by root.
func NewTestDevice(root ed25519.PrivateKey, seed [32]byte) *TestDevice {
	key := ed25519.NewKeyFromSeed(seed[:])
	pub := key.Public().(ed25519.PublicKey)
	return &TestDevice{key: key, root: root.Public().(ed25519.PublicKey),
		cert: ed25519.Sign(root, append([]byte(testCertDomain), pub...))}
}

// Attest returns the test attestation binding sessionPub (PKIX DER).
func (d *TestDevice) Attest(sessionPub []byte) *Attestation {
	rd := ReportData(sessionPub)
	sig := ed25519.Sign(d.key, append([]byte(testReportDomain), rd[:]...))
	return &Attestation{Kind: KindTest, Report: append(rd[:], sig...),
		EKCert: bytes.Clone(d.key.Public().(ed25519.PublicKey)), Intermediate: bytes.Clone(d.cert), Root: bytes.Clone(d.root)}
}

// Root is the test root that certified the device.
func (d *TestDevice) Root() ed25519.PublicKey { return d.root }
