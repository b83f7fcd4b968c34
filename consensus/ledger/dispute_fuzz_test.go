package ledger_test

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// FuzzDisputeEvidence: against a settled optimistic record, a dispute
// whose receipt, proofs or token count are any other than the signed ones
// is refused as bad evidence (or as malformed or too large before that),
// never opened and never an internal error; a disputed chunk past the
// proofs' last is refused as malformed; the settled receipt with its own
// proofs and tokens, naming its one chunk, opens one.
func FuzzDisputeEvidence(f *testing.F) {
	n := newDisputeNet(f, []int64{10, 10, 10}, false)
	n.declareAll()
	good := n.answer(f, 0)
	digest := n.settle(f, 100, good)[0]
	f.Add(good.Receipt, good.Proofs, uint8(3), uint32(0))
	f.Add(good.Receipt, good.Proofs, uint8(3), uint32(1))
	f.Add(good.Receipt, []byte{0, 0, 0, 1}, uint8(1), uint32(0))
	f.Add(good.Receipt[:len(good.Receipt)-1], good.Proofs, uint8(1), uint32(0))
	f.Add([]byte{0xa0}, good.Proofs, uint8(0), uint32(7))
	subj := ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: n.buyer.Account(), RequestDigest: digest}
	nonce := n.c.account(n.disputer.Account()).Nonce // try drops its block: the nonce stays
	f.Fuzz(func(t *testing.T, rcpt, proofs []byte, tokens uint8, chunk uint32) {
		n.c.T = t // the chain's helpers report to the running input
		ev := ledger.DisputeEvidence{Receipt: rcpt, Proofs: proofs, Tokens: make([]uint32, tokens), Input: good.Input, Chunk: chunk}
		if int(tokens) == len(good.Tokens) {
			ev.Tokens = good.Tokens
		}
		raw, err := n.disputer.SignTx(nonce, &ledger.DisputeOpen{Subject: subj, Evidence: ev, Bond: disputeBond})
		if err != nil {
			t.Fatal(err)
		}
		code := n.try(raw)
		inRange := chunk == 0 // the good answer's proofs are one chunk
		valid := bytes.Equal(rcpt, good.Receipt) && bytes.Equal(proofs, good.Proofs) && int(tokens) == len(good.Tokens) && inRange
		switch {
		case valid && code != ledger.CodeOK:
			t.Fatalf("the settled answer's evidence refused: %v", code)
		case !valid && code == ledger.CodeOK:
			t.Fatalf("evidence %x / %x opened a dispute", rcpt, proofs)
		case !valid && code != ledger.CodeBadEvidence && code != ledger.CodeMalformed && code != ledger.CodeTooLarge:
			t.Fatalf("bad evidence refused with %v", code)
		case bytes.Equal(proofs, good.Proofs) && !inRange && code != ledger.CodeMalformed:
			t.Fatalf("chunk %d of the good proofs' one refused with %v, want malformed", chunk, code)
		}
	})
}
