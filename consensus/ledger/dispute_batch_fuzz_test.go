package ledger_test

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// FuzzBatchDisputeEvidence: against a settled expert payment record, a
// batch dispute whose receipt (ParseExpertReceipt's input), rows, output
// or entry are any other bytes is refused with an evidence, receipt,
// machine, size or shape code, never opened and never an internal error;
// the holder's own batch opens one.
func FuzzBatchDisputeEvidence(f *testing.F) {
	n := newDisputeNet(f, []int64{10, 10, 10}, false)
	n.declareAll()
	call := n.expertCall(f, "fuzz", 100)
	good := n.batchOpen(call, 1, 1)
	ge := good.Evidence
	f.Add(ge.Receipt, ge.Rows, ge.Output, uint32(1))
	f.Add(ge.Receipt, ge.Output, ge.Rows, uint32(1))
	f.Add(ge.Receipt, ge.Rows, ge.Output, uint32(0))
	f.Add(ge.Receipt[:len(ge.Receipt)-1], ge.Rows, ge.Output, uint32(1))
	f.Add(call.receipts[0], ge.Rows, ge.Output, uint32(1))
	f.Add([]byte{0xa0}, []byte{1, 2, 3, 4}, []byte{1, 2, 3, 4}, uint32(9))
	nonce := n.c.account(n.disputer.Account()).Nonce // try drops its block: the nonce stays
	f.Fuzz(func(t *testing.T, rcpt, rows, out []byte, entry uint32) {
		n.c.T = t
		p := *good
		p.Evidence = ledger.DisputeEvidence{Receipt: rcpt, ReceiptHashes: ge.ReceiptHashes, Entry: entry, Rows: rows, Output: out}
		raw, err := n.disputer.SignTx(nonce, &p)
		if err != nil {
			t.Fatal(err)
		}
		code := n.try(raw)
		valid := bytes.Equal(rcpt, ge.Receipt) && bytes.Equal(rows, ge.Rows) && bytes.Equal(out, ge.Output) && entry == ge.Entry
		switch {
		case valid && code != ledger.CodeOK:
			t.Fatalf("the holder's batch refused: %v", code)
		case !valid && code == ledger.CodeOK:
			t.Fatalf("evidence %x / %x / %x entry %d opened a dispute", rcpt, rows, out, entry)
		case !valid && code != ledger.CodeBadEvidence && code != ledger.CodeBadReceipt && code != ledger.CodeWrongMachine &&
			code != ledger.CodeMalformed && code != ledger.CodeTooLarge:
			t.Fatalf("bad batch evidence refused with %v", code)
		}
	})
}
