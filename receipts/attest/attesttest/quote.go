package attesttest

import (
	"encoding/hex"
	"encoding/pem"
	"sync"
	"testing"

	"github.com/google/go-sev-guest/abi"
	labi "github.com/google/go-sev-guest/client/linuxabi"
	test "github.com/google/go-sev-guest/testing"

	"github.com/tenzrod/tenzrod/receipts/attest"
)

// QuoteProvider is go-sev-guest's fake configfs-tsm quote provider on the
// test-only chain: it answers the REPORT_DATA of every session key given
// to Bind with a report carrying o's TCB and debug bit, signed by the fake
// VCEK, followed by the chain's certificate table. Bind may run while the
// provider is in use.
type QuoteProvider struct {
	t    testing.TB
	mu   sync.Mutex
	fake *test.QuoteProvider
	o    ReportOpts
}

// NewQuoteProvider returns a fake quote provider whose reports carry o's
// TCB and debug bit (o.Data is ignored: each bound key sets its own).
func NewQuoteProvider(t testing.TB, o ReportOpts) *QuoteProvider {
	t.Helper()
	dev, err := test.TcDevice(nil, &test.DeviceOptions{Signer: Signer(t), Product: abi.DefaultSevProduct()})
	if err != nil {
		t.Fatalf("fake sev-guest device: %v", err)
	}
	return &QuoteProvider{t: t, fake: &test.QuoteProvider{Device: dev}, o: o}
}

// Bind makes the provider answer the REPORT_DATA binding pub (PKIX DER).
func (q *QuoteProvider) Bind(pub []byte) {
	o := q.o
	o.Data = attest.ReportData(pub)
	var rsp labi.SnpReportRespABI
	copy(rsp.Data[:], SignedReport(q.t, o))
	q.mu.Lock()
	defer q.mu.Unlock()
	q.fake.Device.ReportDataRsp[hex.EncodeToString(o.Data[:])] = &test.GetReportResponse{Resp: rsp}
}

// IsSupported is true: the fake is always there.
func (q *QuoteProvider) IsSupported() bool { return true }

// GetRawQuote is the report for reportData and the certificate table, or
// an error for REPORT_DATA no bound key has.
func (q *QuoteProvider) GetRawQuote(reportData [64]byte) ([]uint8, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.fake.GetRawQuote(reportData)
}

// CertChainPEM is the test-only ASK and ARK in the format of AMD's KDS
// cert_chain (ASK first), for an [attest] roots file.
func CertChainPEM(t testing.TB) []byte {
	s := Signer(t)
	out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Ask.Raw})
	return append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Ark.Raw})...)
}

// ProductLine is the product line of the test-only chain.
func ProductLine() string { return test.GetProductLine() }
