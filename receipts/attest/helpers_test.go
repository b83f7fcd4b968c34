package attest

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
)

// created is when the test-only AMD chain was issued; every test verifies
// at now, inside its validity.
var (
	created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now     = created.Add(24 * time.Hour)
)

// goodTCB is the TCB the fake VCEK is issued for and the report claims.
var goodTCB = kds.TCBParts{BlSpl: 3, TeeSpl: 0, SnpSpl: 8, UcodeSpl: 115}

var (
	signerOnce sync.Once
	signer     *test.AmdSigner
	signerErr  error
)

// testSigner is go-sev-guest's test-only AMD chain (ARK → ASK → VCEK)
// with the VCEK issued for goodTCB; built once because RSA signing of the
// chain is the slow part.
func testSigner(t testing.TB) *test.AmdSigner {
	t.Helper()
	signerOnce.Do(func() {
		tcb, err := kds.ComposeTCBParts(goodTCB)
		if err != nil {
			signerErr = err
			return
		}
		b := &test.AmdSignerBuilder{
			Keys:             test.DefaultAmdKeys(),
			ProductName:      test.GetProductName(),
			CSPID:            "go-sev-guest",
			ArkCreationTime:  created,
			AskCreationTime:  created,
			AsvkCreationTime: created,
			VcekCreationTime: created,
			VlekCreationTime: created,
			TCB:              tcb,
		}
		signer, signerErr = b.TestOnlyCertChain()
	})
	if signerErr != nil {
		t.Fatalf("test signer: %v", signerErr)
	}
	return signer
}

// testPolicy trusts only the test-only root, with goodTCB as minimum.
func testPolicy(t testing.TB) *Policy {
	s := testSigner(t)
	root := trust.AMDRootCertsProduct(test.GetProductLine())
	root.ProductCerts = &trust.ProductCerts{Ark: s.Ark, Ask: s.Ask, Asvk: s.Asvk}
	return &Policy{Roots: []*trust.AMDRootCerts{root}, MinTCB: goodTCB}
}

// sessionPub returns a fresh session key's PKIX DER.
func sessionPub(t testing.TB) []byte {
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

var testMeasurement = func() []byte {
	m := make([]byte, 48)
	for i := range m {
		m[i] = byte(0xA0 + i)
	}
	return m
}()

type reportOpts struct {
	data  [64]byte
	tcb   kds.TCBParts
	debug bool
}

// signedReport builds a raw SEV-SNP report and signs it with the fake VCEK.
func signedReport(t testing.TB, o reportOpts) []byte {
	t.Helper()
	s := testSigner(t)
	raw := test.CreateRawReport(&test.TestReportOptions{ReportData: o.data[:]})
	r := raw[:abi.ReportSize]
	binary.LittleEndian.PutUint64(r[0x08:0x10], abi.SnpPolicyToBytes(abi.SnpPolicy{Debug: o.debug}))
	copy(r[0x90:0xC0], testMeasurement)
	tcb, err := kds.ComposeTCBParts(o.tcb)
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

// goodAttestation binds pub with the whole chain carried.
func goodAttestation(t testing.TB, pub []byte) *Attestation {
	s := testSigner(t)
	return &Attestation{
		Kind:         KindSEVSNP,
		Report:       signedReport(t, reportOpts{data: ReportData(pub), tcb: goodTCB}),
		EKCert:       s.Vcek.Raw,
		Intermediate: s.Ask.Raw,
		Root:         s.Ark.Raw,
	}
}

// crlRevoking makes a CRL signed by issuer revoking serials.
func crlRevoking(t testing.TB, issuer *x509.Certificate, key crypto.Signer, serials ...*big.Int) *x509.RevocationList {
	t.Helper()
	tmpl := &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: created, NextUpdate: now.Add(30 * 24 * time.Hour)}
	if _, ok := key.(*ecdsa.PrivateKey); !ok {
		tmpl.SignatureAlgorithm = x509.SHA384WithRSAPSS
	}
	for _, s := range serials {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: s, RevocationTime: created.Add(time.Hour)})
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

// foreignCA is a CRL-signing CA that is not AMD's, test or real.
func foreignCA(t testing.TB) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "not AMD"},
		NotBefore: created, NotAfter: now.Add(365 * 24 * time.Hour),
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
