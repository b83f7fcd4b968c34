package provider

import (
	"errors"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestRecordSinkExpertReceipt: a holder takes a record paying it for
// expert batches only with an expert receipt its own machine signed for
// its own peer, under the request digest its quote digest gives.
func TestRecordSinkExpertReceipt(t *testing.T) {
	m, sess, pid := testSession(t)
	rows, _ := expert.PackRows([][]float32{{1, 2}}, 2)
	req := &expert.Request{Network: "n", Layer: 1, Dim: 2, Batches: []expert.WireBatch{{Expert: 3, Positions: []uint32{5}, Rows: rows}}}
	env, err := expert.Sign(sess, expert.NewReceipt(sess, req, [][]byte{rows}, time.Now()), false)
	if err != nil {
		t.Fatal(err)
	}
	quote := terms.Hash32{7}
	rec := func(rd terms.Hash32) *receipt.PaymentRecord {
		return &receipt.PaymentRecord{Provider: m, Receipt: env, QuoteDigest: quote, RequestDigest: rd}
	}
	sink := NewRecordSink(nil, nil, m, pid, clock.New())
	if err := sink.checkReceipt(rec(ExpertRecordDigest(quote, m))); err != nil {
		t.Fatalf("the holder's own receipt refused: %v", err)
	}
	var ref *payment.Refusal
	if err := sink.checkReceipt(rec(terms.Hash32{1})); !errors.As(err, &ref) || ref.Code != uint32(ledger.CodeBadReceipt) {
		t.Fatalf("a record under another request digest: %v", err)
	}
	other := NewRecordSink(nil, nil, m, "12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo", clock.New())
	if err := other.checkReceipt(rec(ExpertRecordDigest(quote, m))); !errors.As(err, &ref) || ref.Code != uint32(ledger.CodeBadReceipt) {
		t.Fatalf("a receipt bound to another peer: %v", err)
	}
}
