package ledger_test

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// swapProofs returns an encoded proof set (commit.Encode) with its first
// two chunk proofs exchanged.
func swapProofs(t *testing.T, b []byte) []byte {
	t.Helper()
	ps, err := commit.Decode(b)
	if err != nil || len(ps) < 2 {
		t.Fatalf("proofs: %d chunks, %v", len(ps), err)
	}
	ps[0], ps[1] = ps[1], ps[0]
	return commit.Encode(ps)
}

// withInput returns ev with its input replaced by in.
func withInput(t *testing.T, ev ledger.DisputeEvidence, edit func(*receipt.EvidenceInput)) ledger.DisputeEvidence {
	t.Helper()
	in, err := receipt.DecodeEvidenceInput(ev.Input)
	if err != nil {
		t.Fatal(err)
	}
	edit(&in)
	if ev.Input, err = receipt.EncodeEvidenceInput(in); err != nil {
		t.Fatal(err)
	}
	return ev
}

// forgeries are every way a disputer could alter an answer's evidence
// (ev, of more than one proof chunk; other is another answer of the same
// provider), each named.
func forgeries(t *testing.T, ev, other ledger.DisputeEvidence) map[string]ledger.DisputeEvidence {
	t.Helper()
	edit := func(f func(e *ledger.DisputeEvidence)) ledger.DisputeEvidence {
		e := ev
		e.Tokens = slices.Clone(ev.Tokens)
		f(&e)
		return e
	}
	// One more token that spells nothing (an end-of-text or empty piece):
	// the text and output hash are unchanged, the recomputation is one
	// step longer than the proofs.
	const emptyPiece = 2
	return map[string]ledger.DisputeEvidence{
		"appended empty-piece token": edit(func(e *ledger.DisputeEvidence) { e.Tokens = append(e.Tokens, emptyPiece) }),
		"prepended token":            edit(func(e *ledger.DisputeEvidence) { e.Tokens = append([]uint32{emptyPiece}, e.Tokens...) }),
		"dropped last token":         edit(func(e *ledger.DisputeEvidence) { e.Tokens = e.Tokens[:len(e.Tokens)-1] }),
		"dropped first token":        edit(func(e *ledger.DisputeEvidence) { e.Tokens = e.Tokens[1:] }),
		"replaced token":             edit(func(e *ledger.DisputeEvidence) { e.Tokens[3]++ }),
		"swapped tokens":             edit(func(e *ledger.DisputeEvidence) { e.Tokens[0], e.Tokens[1] = e.Tokens[1], e.Tokens[0] }),
		"no tokens":                  edit(func(e *ledger.DisputeEvidence) { e.Tokens = nil }),
		"another answer's tokens":    edit(func(e *ledger.DisputeEvidence) { e.Tokens = other.Tokens }),
		"reordered proofs":           edit(func(e *ledger.DisputeEvidence) { e.Proofs = swapProofs(t, ev.Proofs) }),
		"dropped a proof":            edit(func(e *ledger.DisputeEvidence) { e.Proofs = dropLastProof(t, ev.Proofs) }),
		"another answer's proofs":    edit(func(e *ledger.DisputeEvidence) { e.Proofs = other.Proofs }),
		"other sampling seed":        withInput(t, ev, func(in *receipt.EvidenceInput) { in.Sampling.Seed++ }),
		"other temperature":          withInput(t, ev, func(in *receipt.EvidenceInput) { in.Sampling.Temperature = 0 }),
		"other stop strings":         withInput(t, ev, func(in *receipt.EvidenceInput) { in.Sampling.Stop = []string{"\n"} }),
		"other prompt":               withInput(t, ev, func(in *receipt.EvidenceInput) { in.Prompt += " and more" }),
		"chat instead of completion": withInput(t, ev, func(in *receipt.EvidenceInput) {
			in.Chat, in.Messages, in.Prompt = true, []terms.Message{{Role: "user", Content: in.Prompt}}, ""
		}),
		"input with an unknown field":            edit(func(e *ledger.DisputeEvidence) { e.Input = append(e.Input[:len(e.Input)-1], `,"extra":1}`...) }),
		"input with trailing data":               edit(func(e *ledger.DisputeEvidence) { e.Input = append(slices.Clone(e.Input), " {}"...) }),
		"no input":                               edit(func(e *ledger.DisputeEvidence) { e.Input = nil }),
		"another receipt":                        other,
		"another receipt, own proofs and tokens": edit(func(e *ledger.DisputeEvidence) { e.Receipt = other.Receipt }),
	}
}

// dropLastProof removes the last chunk proof of an encoded proof set.
func dropLastProof(t *testing.T, b []byte) []byte {
	t.Helper()
	ps, err := commit.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return commit.Encode(ps[:len(ps)-1])
}

// TestDisputeForgedEvidenceRefused: against a settled optimistic answer,
// evidence altered in any way from what its provider signed (token count,
// token IDs, proofs, input, receipt) is refused when the dispute opens,
// in the block, with CodeBadEvidence: no dispute exists, the disputer's
// bond is never taken (only the transaction fee), and the provider's
// bond, standing and payment are untouched. So is an answer whose receipt
// predates token binding. The exact signed evidence then opens.
func TestDisputeForgedEvidenceRefused(t *testing.T) {
	n := newDisputeNet(t, []int64{10, 10, 10}, false)
	c := n.c
	n.declareAll()
	ev, other := n.answerOf(t, 0, commit.StepsPerChunk+9, true), n.answerOf(t, 1, commit.StepsPerChunk+9, true)
	legacy := n.answerOf(t, 2, 5, false)
	digests := n.settle(t, 10_000, ev, other, legacy)
	prov, dis0, op0 := n.provider(), c.account(n.disputer.Account()), c.account(n.operator.Account())
	fee := n.c.params().FeePerTx

	cases := forgeries(t, ev, other)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range cases {
			if !yield(k) {
				return
			}
		}
	})
	// All in one block, each its own nonce: a refused open consumes it.
	nonce := dis0.Nonce
	var txs [][]byte
	open := func(digest terms.Hash32, ev ledger.DisputeEvidence) {
		subj := ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: n.buyer.Account(), RequestDigest: digest}
		txs = append(txs, c.SignAt(n.disputer, nonce, &ledger.DisputeOpen{Subject: subj, Evidence: ev, Bond: disputeBond}))
		nonce++
	}
	for _, name := range names {
		open(digests[0], cases[name])
	}
	names = append(names, "receipt signing no token IDs")
	open(digests[2], legacy)
	res := n.blockCodes(txs...)
	for i, r := range res.Txs {
		if r.Code != ledger.CodeBadEvidence {
			t.Errorf("%s: code %v (%s), want %v", names[i], r.Code, r.Log, ledger.CodeBadEvidence)
		}
	}
	for _, d := range []terms.Hash32{digests[0], digests[2]} {
		id := ledger.DisputeID(ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: n.buyer.Account(), RequestDigest: d})
		var got ledger.Dispute
		if c.get(ledger.KeyDispute(id), &got) {
			t.Fatalf("a forged dispute was opened: %+v", got)
		}
	}
	wantBal := dis0.Balance - uint64(len(txs))*fee
	if got := c.account(n.disputer.Account()).Balance; got != wantBal {
		t.Fatalf("disputer balance %d, want %d (fees only, no bond taken)", got, wantBal)
	}
	if p := n.provider(); p.Bond != prov.Bond || p.SlashedUntil != 0 || p.OpenDisputes != 0 {
		t.Fatalf("provider after forged disputes: %+v, was %+v", p, prov)
	}
	if got := c.account(n.operator.Account()).Balance; got != op0.Balance {
		t.Fatalf("operator balance %d, was %d", got, op0.Balance)
	}
	id, tx := n.open(digests[0], ev)
	n.block(tx)
	if d := n.dispute(id); d.Status != ledger.DisputeDrawing {
		t.Fatalf("the signed evidence did not open: %+v", d)
	}
}

// TestProofStepsFraming: an answer whose provider signed proofs of
// another framing or length than its tokens (which a gateway refuses to
// pay) cannot be disputed either: the chain counts the decode steps of
// exactly the proof sets commit.Decode accepts, one per signed token.
func TestProofStepsFraming(t *testing.T) {
	n := newDisputeNet(t, []int64{10}, false)
	n.declareAll()
	good := n.answerOf(t, 0, 2*commit.StepsPerChunk+1, true)
	trailing := append(slices.Clone(good.Proofs), 0)
	short := slices.Clone(good.Proofs)
	binary.BigEndian.PutUint32(short, 1)
	ps, err := commit.Decode(good.Proofs)
	if err != nil {
		t.Fatal(err)
	}
	partial := commit.Encode([]commit.Proof{ps[2], ps[0]})
	cases := map[string]ledger.DisputeEvidence{
		"trailing byte":           n.signAnswer(t, 1, good.Tokens, trailing, true),
		"count of one":            n.signAnswer(t, 2, good.Tokens, short, true),
		"no proofs":               n.signAnswer(t, 3, good.Tokens, commit.Encode(nil), true),
		"partial proof not last":  n.signAnswer(t, 4, good.Tokens, partial, true),
		"one token more":          n.signAnswer(t, 5, append(slices.Clone(good.Tokens), 9), good.Proofs, true),
		"one token fewer":         n.signAnswer(t, 6, good.Tokens[1:], good.Proofs, true),
		"empty proof set, tokens": n.signAnswer(t, 7, good.Tokens, nil, true),
	}
	var evs []ledger.DisputeEvidence
	var names []string
	for name, ev := range cases {
		names, evs = append(names, name), append(evs, ev)
	}
	digests := n.settle(t, 100, append(evs, good)...)
	for i, name := range names {
		if _, tx := n.open(digests[i], evs[i]); n.try(tx) != ledger.CodeBadEvidence {
			t.Errorf("%s: not refused as bad evidence", name)
		}
	}
	if _, tx := n.open(digests[len(evs)], good); n.try(tx) != ledger.CodeOK {
		t.Fatal("the signed 65-step answer does not open")
	}
}
