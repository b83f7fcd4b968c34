package expert

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestEvidenceDisputeOpen: evidence of a batch becomes the ledger's batch
// dispute: the chain's own decoder reads the holder's receipt as this
// package signed it (same model, layer, machine, peer, entries and
// limits), the subject names the record and the batch, the receipt
// hashes hash to what the holder's payment record carries, and a list
// without the batch's receipt is refused.
func TestEvidenceDisputeOpen(t *testing.T) {
	if MaxReceiptSize != ledger.MaxExpertReceiptBytes || MaxReceiptPayload != ledger.MaxExpertReceiptPayload || ReceiptPayloadType != ledger.ExpertReceiptPayloadType {
		t.Fatalf("receipt limits and labels differ from the chain's: %d/%d %d/%d %q/%q", MaxReceiptSize, ledger.MaxExpertReceiptBytes,
			MaxReceiptPayload, ledger.MaxExpertReceiptPayload, ReceiptPayloadType, ledger.ExpertReceiptPayloadType)
	}
	h := newHolderIdentity(t)
	const dim = 4
	in := [][]float32{{1, 2, 3, 4}, {5, 6, 7, 8}}
	rows, _ := PackRows(in, dim)
	out, _ := PackRows([][]float32{{0, 1, 0, 1}, {1, 0, 1, 0}}, dim)
	other, _ := PackRows([][]float32{{9, 9, 9, 9}}, dim)
	req := &Request{Model: [32]byte{7}, Layer: 3, Dim: dim, Batches: []WireBatch{{Expert: 1, Positions: []uint32{0}, Rows: other},
		{Expert: 2, Positions: []uint32{4, 5}, Rows: rows}}}
	rc := NewReceipt(h.sess, req, [][]byte{other, out}, time.Now())
	env, err := Sign(h.sess, rc, false)
	if err != nil {
		t.Fatal(err)
	}
	_, lr, err := ledger.ParseExpertReceipt(env)
	if err != nil {
		t.Fatal(err)
	}
	if lr.Model != rc.Model || lr.Layer != rc.Layer || !bytes.Equal(lr.Machine, rc.Machine) || !bytes.Equal(lr.Peer, rc.Peer) ||
		lr.TimeMs != rc.TimeMs || len(lr.Entries) != 2 || lr.Entries[1].Expert != 2 || !slices.Equal(lr.Entries[1].Positions, []uint32{4, 5}) ||
		lr.Entries[1].InputHash != rc.Entries[1].InputHash || lr.Entries[1].OutputHash != rc.Entries[1].OutputHash {
		t.Fatalf("the chain reads %+v, the holder signed %+v", lr, rc)
	}
	b := SampledBatch{Model: req.Model, Layer: 3, Dim: dim, Expert: 2, Positions: []uint32{4, 5}, Input: rows, Output: out,
		Receipt: env, Index: 1, Holder: []byte(h.peer), Machine: h.machine()}
	ev, err := Recheck(t.Context(), &b, zeroRedo{}, time.Now())
	if err != nil || ev == nil {
		t.Fatalf("recheck of a batch recomputed otherwise: %v %v", ev, err)
	}
	earlier, _ := Sign(h.sess, NewReceipt(h.sess, req, [][]byte{other, other}, time.Now()), false)
	u := HolderUsage{Receipts: [][]byte{earlier, env}}
	payer, digest := terms.AccountID{1}, terms.Hash32{2}
	p, err := ev.DisputeOpen(payer, digest, u.ReceiptHashes(), 500)
	if err != nil {
		t.Fatal(err)
	}
	s, e := p.Subject, p.Evidence
	if s.Kind != ledger.SubjectExpertBatch || s.Payer != payer || s.RequestDigest != digest || *s.Batch != ev.Ref() || p.Bond != 500 {
		t.Fatalf("subject %+v", s)
	}
	if ledger.ReceiptsHash(e.ReceiptHashes) != u.ReceiptsHash() || e.Entry != 1 || !bytes.Equal(e.Rows, rows) || !bytes.Equal(e.Output, out) || !bytes.Equal(e.Receipt, env) {
		t.Fatalf("evidence %+v", e)
	}
	if _, err := ev.DisputeOpen(payer, digest, u.ReceiptHashes()[:1], 500); err == nil || !strings.Contains(err.Error(), "not among") {
		t.Fatalf("a call's list without the batch's receipt: %v", err)
	}
}

// zeroRedo recomputes every batch as zeros.
type zeroRedo struct{}

func (zeroRedo) Redo(_ context.Context, b *SampledBatch) (Redone, error) {
	return Redone{Output: make([]byte, len(b.Output)), By: "recomputer"}, nil
}
