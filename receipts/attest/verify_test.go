package attest_test

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-sev-guest/kds"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

var now = attesttest.Now

func session(pub []byte) attest.Session {
	return attest.Session{Pub: pub, NotAfter: now.Add(time.Hour)}
}

// refused asserts Verify refuses with want and the matching Reason code.
func refused(t *testing.T, att *attest.Attestation, s attest.Session, p *attest.Policy, want error, reason string) {
	t.Helper()
	res, err := attest.Verify(att, s, p, now)
	if !errors.Is(err, want) {
		t.Fatalf("attest.Verify = %v, %v; want %v", res, err, want)
	}
	if got := attest.Reason(err); got != reason {
		t.Fatalf("attest.Reason(%v) = %q, want %q", err, got, reason)
	}
	if res != nil {
		t.Fatalf("refused attestation returned a result %+v", res)
	}
}

func TestVerifyAcceptsReportBoundToSessionKey(t *testing.T) {
	pub := attesttest.SessionPub(t)
	res, err := attest.Verify(attesttest.Attestation(t, pub), session(pub), attesttest.Policy(t), now)
	if err != nil {
		t.Fatalf("attest.Verify: %v", err)
	}
	if res.Kind != attest.KindSEVSNP || res.Signer != "VCEK" {
		t.Fatalf("result %+v: want sev-snp signed by VCEK", res)
	}
	if res.MeasurementHex() != "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf" {
		t.Fatalf("measurement %s", res.MeasurementHex())
	}
	if res.ReportedTCB != attesttest.GoodTCB {
		t.Fatalf("reported TCB %+v, want %+v", res.ReportedTCB, attesttest.GoodTCB)
	}
}

func TestVerifyAcceptsWithoutCarriedRoots(t *testing.T) {
	pub := attesttest.SessionPub(t)
	att := attesttest.Attestation(t, pub)
	att.Intermediate, att.Root = nil, nil
	if _, err := attest.Verify(att, session(pub), attesttest.Policy(t), now); err != nil {
		t.Fatalf("attest.Verify without carried ASK/ARK: %v", err)
	}
}

func TestVerifyRefusesReportBindingAnotherKey(t *testing.T) {
	pub, other := attesttest.SessionPub(t), attesttest.SessionPub(t)
	refused(t, attesttest.Attestation(t, other), session(pub), attesttest.Policy(t), attest.ErrWrongKey, "wrong_key")
}

func TestVerifyRefusesChainToAnotherRoot(t *testing.T) {
	// AMD's real embedded roots did not sign the test-only VCEK.
	pub := attesttest.SessionPub(t)
	p := attesttest.Policy(t)
	p.Roots = nil
	refused(t, attesttest.Attestation(t, pub), session(pub), p, attest.ErrChain, "chain")
}

func TestVerifyRefusesCarriedIntermediateNotTrusted(t *testing.T) {
	pub := attesttest.SessionPub(t)
	att := attesttest.Attestation(t, pub)
	att.Intermediate = attesttest.Signer(t).Asvk.Raw
	refused(t, att, session(pub), attesttest.Policy(t), attest.ErrChain, "chain")
}

func TestVerifyRefusesTamperedReport(t *testing.T) {
	pub := attesttest.SessionPub(t)
	att := attesttest.Attestation(t, pub)
	att.Report[0x90] ^= 1 // the measurement, after signing
	refused(t, att, session(pub), attesttest.Policy(t), attest.ErrChain, "chain")
}

func TestVerifyRefusesRevokedIntermediate(t *testing.T) {
	pub := attesttest.SessionPub(t)
	s := attesttest.Signer(t)
	p := attesttest.Policy(t)
	p.CRLs = append(p.CRLs, attesttest.CRL(t, s.Ark, s.Keys.Ark, s.Ask.SerialNumber))
	refused(t, attesttest.Attestation(t, pub), session(pub), p, attest.ErrRevoked, "revoked")
}

func TestVerifyRefusesRevokedVCEK(t *testing.T) {
	pub := attesttest.SessionPub(t)
	s := attesttest.Signer(t)
	p := attesttest.Policy(t)
	p.CRLs = append(p.CRLs, attesttest.CRL(t, s.Ark, s.Keys.Ark, big.NewInt(99), s.Vcek.SerialNumber))
	refused(t, attesttest.Attestation(t, pub), session(pub), p, attest.ErrRevoked, "revoked")
}

func TestVerifyIgnoresCRLOfAnotherIssuer(t *testing.T) {
	// A CRL the trusted ARK did not sign cannot revoke its chain.
	pub := attesttest.SessionPub(t)
	s := attesttest.Signer(t)
	ca, key := attesttest.ForeignCA(t)
	p := attesttest.Policy(t)
	p.CRLs = append(p.CRLs, attesttest.CRL(t, ca, key, s.Ask.SerialNumber, s.Vcek.SerialNumber))
	if _, err := attest.Verify(attesttest.Attestation(t, pub), session(pub), p, now); err != nil {
		t.Fatalf("attest.Verify with a foreign CRL: %v", err)
	}
}

func TestVerifyRefusesExpiredSessionCert(t *testing.T) {
	pub := attesttest.SessionPub(t)
	s := attest.Session{Pub: pub, NotAfter: now.Add(-time.Second)}
	refused(t, attesttest.Attestation(t, pub), s, attesttest.Policy(t), attest.ErrSessionExpired, "session_expired")
	if _, err := attest.Verify(attesttest.Attestation(t, pub), s, attesttest.Policy(t), now); !errors.Is(err, attest.ErrStale) {
		t.Fatalf("expired session: %v does not wrap attest.ErrStale", err)
	}
}

func TestVerifyRefusesTCBBelowMinimum(t *testing.T) {
	pub := attesttest.SessionPub(t)
	p := attesttest.Policy(t)
	p.MinTCB = kds.TCBParts{BlSpl: 3, SnpSpl: 9, UcodeSpl: 115}
	refused(t, attesttest.Attestation(t, pub), session(pub), p, attest.ErrLowTCB, "low_tcb")
	if _, err := attest.Verify(attesttest.Attestation(t, pub), session(pub), p, now); !errors.Is(err, attest.ErrStale) {
		t.Fatalf("low TCB: %v does not wrap attest.ErrStale", err)
	}
}

func TestVerifyRefusesDebugGuest(t *testing.T) {
	pub := attesttest.SessionPub(t)
	att := attesttest.Attestation(t, pub)
	att.Report = attesttest.SignedReport(t, attesttest.ReportOpts{Data: attest.ReportData(pub), TCB: attesttest.GoodTCB, Debug: true})
	refused(t, att, session(pub), attesttest.Policy(t), attest.ErrDebugGuest, "debug_guest")
}

func TestVerifyRefusesMalformed(t *testing.T) {
	pub := attesttest.SessionPub(t)
	for name, mutate := range map[string]func(*attest.Attestation){
		"kind":        func(a *attest.Attestation) { a.Kind = "tdx" },
		"short":       func(a *attest.Attestation) { a.Report = a.Report[:100] },
		"no cert":     func(a *attest.Attestation) { a.EKCert = nil },
		"bad cert":    func(a *attest.Attestation) { a.EKCert = []byte{0x30, 0x01, 0x00} },
		"mbz nonzero": func(a *attest.Attestation) { a.Report[0x4C] = 1 },
	} {
		t.Run(name, func(t *testing.T) {
			att := attesttest.Attestation(t, pub)
			mutate(att)
			refused(t, att, session(pub), attesttest.Policy(t), attest.ErrMalformed, "malformed")
		})
	}
}

func TestBindingIsDomainSeparated(t *testing.T) {
	pub := attesttest.SessionPub(t)
	a, b := attest.ReportData(pub), attest.ReportData(append([]byte{0}, pub...))
	if a == b {
		t.Fatal("different keys give one REPORT_DATA")
	}
	if a == [64]byte{} {
		t.Fatal("zero REPORT_DATA")
	}
}
