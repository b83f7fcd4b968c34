package ledger_test

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/identity/identitytest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// expertCall is one call's work of the disputeNet's machine as an expert
// holder: per exchange a signed expert receipt of two batches (experts 2
// and 5 of layer 1) over 2 rows of dim 4, and the record paying for it.
type expertCall struct {
	receipts [][]byte
	hashes   []terms.Hash32
	rows     [][2][]byte // per exchange, per entry
	out      [][2][]byte
	digest   terms.Hash32
}

const batchLayer, batchDim = 1, 4

var batchExperts = [2]uint32{2, 5}

// rowBytes is n deterministic rows of batchDim float32 values' bytes.
func rowBytes(tag string, n int) []byte {
	var b []byte
	for len(b) < n*batchDim*4 {
		h := sha256.Sum256(fmt.Appendf(nil, "%s-%d", tag, len(b)))
		b = append(b, h[:]...)
	}
	return b[:n*batchDim*4]
}

// sealExpert signs r as an expert receipt with session s.
func sealExpert(t testing.TB, s *identity.Session, r *ledger.ExpertReceipt) []byte {
	t.Helper()
	payload, err := cborx.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return identitytest.Seal(t, s, ledger.ExpertReceiptDomain, ledger.ExpertReceiptPayloadType, payload)
}

// exchange is an expert receipt of the machine for exchange i of call tag.
func (n *disputeNet) exchange(t testing.TB, tag string, i int) ([]byte, [2][]byte, [2][]byte) {
	t.Helper()
	mid := n.m.machineID()
	r := &ledger.ExpertReceipt{Model: n.model, Layer: batchLayer, Machine: mid[:], Peer: []byte(n.m.PeerID), TimeMs: genesisTime.UnixMilli()}
	var rows, out [2][]byte
	for j, e := range batchExperts {
		rows[j], out[j] = rowBytes(fmt.Sprintf("%s-in-%d-%d", tag, i, j), 2), rowBytes(fmt.Sprintf("%s-out-%d-%d", tag, i, j), 2)
		r.Entries = append(r.Entries, ledger.ExpertEntry{Expert: e, Positions: []uint32{uint32(i), uint32(i + 1)},
			InputHash: sha256.Sum256(rows[j]), OutputHash: sha256.Sum256(out[j])})
	}
	return sealExpert(t, n.m.Session, r), rows, out
}

// expertCall settles a record of the buyer paying the machine price for
// three exchanges of call tag, as a serving provider pays a holder.
func (n *disputeNet) expertCall(t testing.TB, tag string, price uint64) *expertCall {
	t.Helper()
	c := &expertCall{}
	for i := range 3 {
		env, rows, out := n.exchange(t, tag, i)
		c.receipts = append(c.receipts, env)
		c.hashes = append(c.hashes, sha256.Sum256(env))
		c.rows, c.out = append(c.rows, rows), append(c.out, out)
	}
	c.digest = sha256.Sum256([]byte("expert-call-" + tag))
	rec := ledgertest.Signed(t, n.buyer, receipt.PaymentRecord{Payer: n.buyer.Account(), Provider: n.m.machineID(), RequestDigest: c.digest,
		QuoteDigest: ledger.ReceiptsHash(c.hashes), Price: price, Units: 12, Receipt: c.receipts[0], ReceiptHash: c.hashes[0],
		ExpiryHeight: n.c.l.Height() + 50})
	wantSkipped(t, n.block(n.c.sign(n.operator, &ledger.Settlement{Records: []receipt.PaymentRecord{rec}})).Txs[0], 1, nil)
	return c
}

// batchOpen is the dispute of entry j of exchange i of call c.
func (n *disputeNet) batchOpen(c *expertCall, i, j int) *ledger.DisputeOpen {
	return &ledger.DisputeOpen{
		Subject: ledger.DisputeSubject{Kind: ledger.SubjectExpertBatch, Payer: n.buyer.Account(), RequestDigest: c.digest,
			Batch: &ledger.ExpertBatchRef{Holder: n.m.machineID(), Model: n.model, Layer: batchLayer, Expert: batchExperts[j], ReceiptHash: c.hashes[i]}},
		Evidence: ledger.DisputeEvidence{Receipt: c.receipts[i], ReceiptHashes: c.hashes, Entry: uint32(j), Rows: c.rows[i][j], Output: c.out[i][j]},
		Bond:     disputeBond,
	}
}
