package attesttest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/google/go-sev-guest/abi"
	"github.com/google/go-sev-guest/kds"
	test "github.com/google/go-sev-guest/testing"
	"github.com/google/go-sev-guest/verify/trust"

	"github.com/tenzrod/tenzrod/receipts/attest"
)

// Created is when the test-only AMD chain was issued (a day before the
// test binary started, so wall-clock tests fall inside its 7-year VCEK
// validity); Now is a fixed verification time inside it.
var (
	Created = time.Now().UTC().Truncate(time.Hour).Add(-24 * time.Hour)
	Now     = Created.Add(24 * time.Hour)
)

// GoodTCB is the TCB the fake VCEK is issued for and the report claims.
var GoodTCB = kds.TCBParts{BlSpl: 3, TeeSpl: 0, SnpSpl: 8, UcodeSpl: 115}

var (
	signerOnce sync.Once
	signer     *test.AmdSigner
	signerErr  error
)

// Signer is go-sev-guest's test-only AMD chain (ARK → ASK → VCEK)
// with the VCEK issued for GoodTCB; built once because RSA signing of the
// chain is the slow part.
func Signer(t testing.TB) *test.AmdSigner {
	t.Helper()
	signerOnce.Do(func() {
		tcb, err := kds.ComposeTCBParts(GoodTCB)
		if err != nil {
			signerErr = err
			return
		}
		b := &test.AmdSignerBuilder{
			Keys:             test.DefaultAmdKeys(),
			ProductName:      test.GetProductName(),
			CSPID:            "go-sev-guest",
			ArkCreationTime:  Created,
			AskCreationTime:  Created,
			AsvkCreationTime: Created,
			VcekCreationTime: Created,
			VlekCreationTime: Created,
			TCB:              tcb,
		}
		signer, signerErr = b.TestOnlyCertChain()
	})
	if signerErr != nil {
		t.Fatalf("test signer: %v", signerErr)
	}
	return signer
}

// Policy trusts only the test-only root, with GoodTCB as minimum.
func Policy(t testing.TB) *attest.Policy {
	s := Signer(t)
	root := trust.AMDRootCertsProduct(test.GetProductLine())
	root.ProductCerts = &trust.ProductCerts{Ark: s.Ark, Ask: s.Ask, Asvk: s.Asvk}
	return &attest.Policy{Roots: []*trust.AMDRootCerts{root}, MinTCB: GoodTCB}
}

// SessionPub returns a fresh session key's PKIX DER.
func SessionPub(t testing.TB) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// Measurement is the launch measurement every test report carries.
var Measurement = func() []byte {
	m := make([]byte, 48)
	for i := range m {
		m[i] = byte(0xA0 + i)
	}
	return m
}()

// ReportOpts are the report fields a test varies.
type ReportOpts struct {
	Data  [64]byte
	TCB   kds.TCBParts
	Debug bool
}

// SignedReport builds a raw SEV-SNP report and signs it with the fake VCEK.
func SignedReport(t testing.TB, o ReportOpts) []byte {
	t.Helper()
	s := Signer(t)
	raw := test.CreateRawReport(&test.TestReportOptions{ReportData: o.Data[:]})
	r := raw[:abi.ReportSize]
	binary.LittleEndian.PutUint64(r[0x08:0x10], abi.SnpPolicyToBytes(abi.SnpPolicy{Debug: o.Debug}))
	copy(r[0x90:0xC0], Measurement)
	tcb, err := kds.ComposeTCBParts(o.TCB)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(r[0x180:0x188], uint64(tcb))
	R, S, err := s.Sign(abi.SignedComponent(r))
	if err != nil {
		t.Fatal(err)
	}
	if err := abi.SetSignature(R, S, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Attestation binds pub (PKIX DER) with the whole chain carried.
func Attestation(t testing.TB, pub []byte) *attest.Attestation {
	s := Signer(t)
	return &attest.Attestation{
		Kind:         attest.KindSEVSNP,
		Report:       SignedReport(t, ReportOpts{Data: attest.ReportData(pub), TCB: GoodTCB}),
		EKCert:       s.Vcek.Raw,
		Intermediate: s.Ask.Raw,
		Root:         s.Ark.Raw,
	}
}

// CRL makes a CRL signed by issuer revoking serials.
func CRL(t testing.TB, issuer *x509.Certificate, key crypto.Signer, serials ...*big.Int) *x509.RevocationList {
	t.Helper()
	tmpl := &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: Created, NextUpdate: Now.Add(30 * 24 * time.Hour)}
	if _, ok := key.(*ecdsa.PrivateKey); !ok {
		tmpl.SignatureAlgorithm = x509.SHA384WithRSAPSS
	}
	for _, s := range serials {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: s, RevocationTime: Created.Add(time.Hour)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, issuer, key)
	if err != nil {
		t.Fatal(err)
	}
	crl, err := x509.ParseRevocationList(der)
	if err != nil {
		t.Fatal(err)
	}
	return crl
}

// ForeignCA is a CRL-signing CA that is not AMD's, test or real.
func ForeignCA(t testing.TB) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "not AMD"},
		NotBefore: Created, NotAfter: Now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCRLSign | x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, k
}
