package attest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/go-sev-guest/abi"
	"github.com/google/go-sev-guest/kds"
	spb "github.com/google/go-sev-guest/proto/sevsnp"
	"github.com/google/go-sev-guest/verify"
	"github.com/google/go-sev-guest/verify/trust"
)

// Session is the certified session key an attestation must bind, with the
// expiry of the certificate that certifies it.
type Session struct {
	Pub      []byte    // PKIX DER, identity.Certificate.SessionPub
	NotAfter time.Time // identity.Certificate's NotAfter
}

// Policy is what a verifier trusts and requires.
type Policy struct {
	// Roots are the trusted ARK/ASK (and ASVK) per product line; empty means
	// the AMD roots embedded in go-sev-guest.
	Roots []*trust.AMDRootCerts
	// CRLs revoke intermediates or endorsement keys. A CRL is applied only
	// to chains whose trusted ARK signed it.
	CRLs []*x509.RevocationList
	// MinTCB is the governed minimum: every component of the reported TCB
	// must be at least this.
	MinTCB kds.TCBParts
	// TDXRoots are the trusted Intel SGX roots for TDX quotes; nil means
	// the root embedded in go-tdx-guest (which logs a warning per use).
	TDXRoots *x509.CertPool
	// Cache, when set, remembers successful verifications (NewCache).
	Cache *Cache
	// AllowDebug accepts debug guests. Never set outside tests of other
	// refusals: a debug guest's memory is open to its host.
	AllowDebug bool
	// TestRoot, when set, is the TEST-ONLY root of devnets (KindTest):
	// a policy with it accepts test attestations under that root and
	// nothing else, so a node never trusts real and test roots at once.
	// Nil (every production node) refuses every test attestation.
	TestRoot ed25519.PublicKey
}

// Result is what a verified attestation establishes.
type Result struct {
	Kind        string
	Signer      string // "VCEK" or "VLEK"
	Measurement []byte // 48-byte launch measurement
	ReportedTCB kds.TCBParts
	ProductLine string
	// SessionPub is the session key (PKIX DER) the report binds: the only
	// key whose receipts a `tee` call may be billed for.
	SessionPub []byte
	// NotAfter is when the result stops holding: the bound session
	// certificate's expiry or the endorsement key certificate's, whichever
	// is first (a cached result is not reused past it).
	NotAfter time.Time
}

// MeasurementHex is the launch measurement as shown to operators.
func (r *Result) MeasurementHex() string { return hex.EncodeToString(r.Measurement) }

// Verify checks att against the vendor chain in p, that it binds session's
// key, and that it is fresh at now. Cheap checks (shape, binding, expiry,
// guest policy) run before any signature.
func Verify(att *Attestation, session Session, p *Policy, now time.Time) (*Result, error) {
	if att == nil || p == nil {
		return nil, fmt.Errorf("%w: nil attestation or policy", ErrMalformed)
	}
	if err := att.checkShape(); err != nil {
		return nil, err
	}
	if p.Cache != nil {
		return p.Cache.verify(att, session, p, now)
	}
	return verifyUncached(att, session, p, now)
}

func verifyUncached(att *Attestation, session Session, p *Policy, now time.Time) (*Result, error) {
	if att.Kind == KindTest {
		return verifyTest(att, session, p, now)
	}
	if p.TestRoot != nil {
		return nil, fmt.Errorf("%w: this node trusts only the TEST-ONLY root, not %s vendor chains", ErrChain, att.Kind)
	}
	if att.Kind == KindTDX {
		return verifyTDX(att, session, p, now)
	}
	rep, err := abi.ReportToProto(att.Report)
	if err != nil {
		return nil, fmt.Errorf("%w: report: %w", ErrMalformed, err)
	}
	want := ReportData(session.Pub)
	if subtle.ConstantTimeCompare(rep.GetReportData(), want[:]) != 1 {
		return nil, ErrWrongKey
	}
	if !now.Before(session.NotAfter) {
		return nil, fmt.Errorf("%w: %w: session certificate expired at %s", ErrStale, ErrSessionExpired,
			session.NotAfter.UTC().Format(time.RFC3339))
	}
	pol, err := abi.ParseSnpPolicy(rep.GetPolicy())
	if err != nil {
		return nil, fmt.Errorf("%w: guest policy: %w", ErrMalformed, err)
	}
	if pol.Debug && !p.AllowDebug {
		return nil, ErrDebugGuest
	}
	info, err := abi.ParseSignerInfo(rep.GetSignerInfo())
	if err != nil {
		return nil, fmt.Errorf("%w: signer info: %w", ErrMalformed, err)
	}
	ek, err := x509.ParseCertificate(att.EKCert)
	if err != nil {
		return nil, fmt.Errorf("%w: endorsement key certificate: %w", ErrMalformed, err)
	}
	chain := &spb.CertificateChain{AskCert: att.Intermediate, ArkCert: att.Root}
	switch info.SigningKey {
	case abi.VcekReportSigner:
		chain.VcekCert = att.EKCert
	case abi.VlekReportSigner:
		chain.VlekCert = att.EKCert
	default:
		return nil, fmt.Errorf("%w: report signed by %v, want VCEK or VLEK", ErrChain, info.SigningKey)
	}
	roots := p.rootsByLine()
	opts := &verify.Options{DisableCertFetching: true, TrustedRoots: roots, Now: now}
	// go-sev-guest checks the endorsement key certificate's form and chain
	// to the trusted roots and the report's signature under it.
	if err := verify.SnpAttestation(&spb.Attestation{Report: rep, CertificateChain: chain}, opts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrChain, err)
	}
	root, ica := trustedIssuer(roots, ek, info.SigningKey)
	if root == nil {
		return nil, fmt.Errorf("%w: no trusted intermediate signed the %v certificate", ErrChain, info.SigningKey)
	}
	if len(att.Intermediate) > 0 && !bytes.Equal(att.Intermediate, ica.Raw) {
		return nil, fmt.Errorf("%w: carried intermediate is not the trusted one", ErrChain)
	}
	if len(att.Root) > 0 && !bytes.Equal(att.Root, root.ProductCerts.Ark.Raw) {
		return nil, fmt.Errorf("%w: carried ARK is not the trusted one", ErrChain)
	}
	if err := checkRevoked(p.CRLs, root.ProductCerts.Ark, ica, ek); err != nil {
		return nil, err
	}
	tcb := kds.DecomposeTCBVersion(kds.TCBVersion(rep.GetReportedTcb()))
	if !kds.TCBPartsLE(p.MinTCB, tcb) {
		return nil, fmt.Errorf("%w: %w: reported %+v, minimum %+v", ErrStale, ErrLowTCB, tcb, p.MinTCB)
	}
	return &Result{
		Kind:        att.Kind,
		Signer:      info.SigningKey.String(),
		Measurement: bytes.Clone(rep.GetMeasurement()),
		ReportedTCB: tcb,
		ProductLine: root.GetProductLine(),
		SessionPub:  bytes.Clone(session.Pub),
		NotAfter:    earliest(session.NotAfter, ek.NotAfter),
	}, nil
}

func (p *Policy) rootsByLine() map[string][]*trust.AMDRootCerts {
	out := map[string][]*trust.AMDRootCerts{}
	if len(p.Roots) == 0 {
		for line := range trust.DefaultRootCerts {
			if r, err := trust.GetDefaultRootCerts(line); err == nil {
				out[line] = append(out[line], r)
			}
		}
		return out
	}
	for _, r := range p.Roots {
		out[r.GetProductLine()] = append(out[r.GetProductLine()], r)
	}
	return out
}

// trustedIssuer finds the configured root whose intermediate signed ek.
// go-sev-guest has already verified the chain; this names the root so the
// carried certificates and the CRLs can be checked against it.
func trustedIssuer(roots map[string][]*trust.AMDRootCerts, ek *x509.Certificate, key abi.ReportSigner) (*trust.AMDRootCerts, *x509.Certificate) {
	for _, line := range roots {
		for _, r := range line {
			if r.ProductCerts == nil || r.ProductCerts.Ark == nil {
				continue
			}
			ica := r.ProductCerts.Ask
			if key == abi.VlekReportSigner {
				ica = r.ProductCerts.Asvk
			}
			if ica != nil && ek.CheckSignatureFrom(ica) == nil {
				return r, ica
			}
		}
	}
	return nil, nil
}

// earliest is the first of two instants.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
