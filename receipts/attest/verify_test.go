package attest

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-sev-guest/kds"
)

func session(pub []byte) Session { return Session{Pub: pub, NotAfter: now.Add(time.Hour)} }

// refused asserts Verify refuses with want and the matching Reason code.
func refused(t *testing.T, att *Attestation, s Session, p *Policy, want error, reason string) {
	t.Helper()
	res, err := Verify(att, s, p, now)
	if !errors.Is(err, want) {
		t.Fatalf("Verify = %v, %v; want %v", res, err, want)
	}
	if got := Reason(err); got != reason {
		t.Fatalf("Reason(%v) = %q, want %q", err, got, reason)
	}
	if res != nil {
		t.Fatalf("refused attestation returned a result %+v", res)
	}
}

func TestVerifyAcceptsReportBoundToSessionKey(t *testing.T) {
	pub := sessionPub(t)
	res, err := Verify(goodAttestation(t, pub), session(pub), testPolicy(t), now)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if res.Kind != KindSEVSNP || res.Signer != "VCEK" {
		t.Fatalf("result %+v: want sev-snp signed by VCEK", res)
	}
	if res.MeasurementHex() != "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf" {
		t.Fatalf("measurement %s", res.MeasurementHex())
	}
	if res.ReportedTCB != goodTCB {
		t.Fatalf("reported TCB %+v, want %+v", res.ReportedTCB, goodTCB)
	}
}

func TestVerifyAcceptsWithoutCarriedRoots(t *testing.T) {
	pub := sessionPub(t)
	att := goodAttestation(t, pub)
	att.Intermediate, att.Root = nil, nil
	if _, err := Verify(att, session(pub), testPolicy(t), now); err != nil {
		t.Fatalf("Verify without carried ASK/ARK: %v", err)
	}
}

func TestVerifyRefusesReportBindingAnotherKey(t *testing.T) {
	pub, other := sessionPub(t), sessionPub(t)
	refused(t, goodAttestation(t, other), session(pub), testPolicy(t), ErrWrongKey, "wrong_key")
}

func TestVerifyRefusesChainToAnotherRoot(t *testing.T) {
	// AMD's real embedded roots did not sign the test-only VCEK.
	pub := sessionPub(t)
	p := testPolicy(t)
	p.Roots = nil
	refused(t, goodAttestation(t, pub), session(pub), p, ErrChain, "chain")
}

func TestVerifyRefusesCarriedIntermediateNotTrusted(t *testing.T) {
	pub := sessionPub(t)
	att := goodAttestation(t, pub)
	att.Intermediate = testSigner(t).Asvk.Raw
	refused(t, att, session(pub), testPolicy(t), ErrChain, "chain")
}

func TestVerifyRefusesTamperedReport(t *testing.T) {
	pub := sessionPub(t)
	att := goodAttestation(t, pub)
	att.Report[0x90] ^= 1 // the measurement, after signing
	refused(t, att, session(pub), testPolicy(t), ErrChain, "chain")
}

func TestVerifyRefusesRevokedIntermediate(t *testing.T) {
	pub := sessionPub(t)
	s := testSigner(t)
	p := testPolicy(t)
	p.CRLs = append(p.CRLs, crlRevoking(t, s.Ark, s.Keys.Ark, s.Ask.SerialNumber))
	refused(t, goodAttestation(t, pub), session(pub), p, ErrRevoked, "revoked")
}

func TestVerifyRefusesRevokedVCEK(t *testing.T) {
	pub := sessionPub(t)
	s := testSigner(t)
	p := testPolicy(t)
	p.CRLs = append(p.CRLs, crlRevoking(t, s.Ark, s.Keys.Ark, big.NewInt(99), s.Vcek.SerialNumber))
	refused(t, goodAttestation(t, pub), session(pub), p, ErrRevoked, "revoked")
}

func TestVerifyIgnoresCRLOfAnotherIssuer(t *testing.T) {
	// A CRL the trusted ARK did not sign cannot revoke its chain.
	pub := sessionPub(t)
	s := testSigner(t)
	ca, key := foreignCA(t)
	p := testPolicy(t)
	p.CRLs = append(p.CRLs, crlRevoking(t, ca, key, s.Ask.SerialNumber, s.Vcek.SerialNumber))
	if _, err := Verify(goodAttestation(t, pub), session(pub), p, now); err != nil {
		t.Fatalf("Verify with a foreign CRL: %v", err)
	}
}

func TestVerifyRefusesExpiredSessionCert(t *testing.T) {
	pub := sessionPub(t)
	s := Session{Pub: pub, NotAfter: now.Add(-time.Second)}
	refused(t, goodAttestation(t, pub), s, testPolicy(t), ErrSessionExpired, "session_expired")
	if _, err := Verify(goodAttestation(t, pub), s, testPolicy(t), now); !errors.Is(err, ErrStale) {
		t.Fatalf("expired session: %v does not wrap ErrStale", err)
	}
}

func TestVerifyRefusesTCBBelowMinimum(t *testing.T) {
	pub := sessionPub(t)
	p := testPolicy(t)
	p.MinTCB = kds.TCBParts{BlSpl: 3, SnpSpl: 9, UcodeSpl: 115}
	refused(t, goodAttestation(t, pub), session(pub), p, ErrLowTCB, "low_tcb")
	if _, err := Verify(goodAttestation(t, pub), session(pub), p, now); !errors.Is(err, ErrStale) {
		t.Fatalf("low TCB: %v does not wrap ErrStale", err)
	}
}

func TestVerifyRefusesDebugGuest(t *testing.T) {
	pub := sessionPub(t)
	att := goodAttestation(t, pub)
	att.Report = signedReport(t, reportOpts{data: ReportData(pub), tcb: goodTCB, debug: true})
	refused(t, att, session(pub), testPolicy(t), ErrDebugGuest, "debug_guest")
}

func TestVerifyRefusesMalformed(t *testing.T) {
	pub := sessionPub(t)
	for name, mutate := range map[string]func(*Attestation){
		"kind":        func(a *Attestation) { a.Kind = "tdx" },
		"short":       func(a *Attestation) { a.Report = a.Report[:100] },
		"no cert":     func(a *Attestation) { a.EKCert = nil },
		"bad cert":    func(a *Attestation) { a.EKCert = []byte{0x30, 0x01, 0x00} },
		"mbz nonzero": func(a *Attestation) { a.Report[0x4C] = 1 },
	} {
		t.Run(name, func(t *testing.T) {
			att := goodAttestation(t, pub)
			mutate(att)
			refused(t, att, session(pub), testPolicy(t), ErrMalformed, "malformed")
		})
	}
}

func TestBindingIsDomainSeparated(t *testing.T) {
	pub := sessionPub(t)
	a, b := ReportData(pub), ReportData(append([]byte{0}, pub...))
	if a == b {
		t.Fatal("different keys give one REPORT_DATA")
	}
	if a == [64]byte{} {
		t.Fatal("zero REPORT_DATA")
	}
}
