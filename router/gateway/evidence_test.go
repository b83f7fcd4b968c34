package gateway

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestKeepEvidenceOnlyAsSigned: a paid optimistic answer's evidence is
// kept under its request digest and reads back as what the receipt signs
// (tokens, proofs, an input committing to its input commitment); nothing
// is kept for another level, for token IDs the receipt does not sign (a
// buyer who left mid-stream), or for an input that JSON cannot carry as
// signed (invalid UTF-8 in a continuation): the chain would refuse such
// evidence, so keeping it would only mislead the buyer.
func TestKeepEvidenceOnlyAsSigned(t *testing.T) {
	st, err := store.OpenWith(t.TempDir(), store.GroupSync)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	g := &Gateway{ledger: st, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	model := bytes.Repeat([]byte{0x4d}, 32)
	ids := []int{5, 0xfffd, 7}
	signed := []uint32{5, 0xfffd, 7}
	try := func(name string, level terms.Verification, continuation string, got []int) (store.Evidence, [32]byte, error) {
		t.Helper()
		r, proofs := optimisticReceipt(t, 3, signed)
		nonce := bytes.Repeat([]byte(name[:1]), 16)
		req := &infer.Request{Nonce: nonce, ModelID: model, Chat: true, Continuation: continuation,
			Messages: []terms.Message{{Role: "user", Content: "héllo 🙂"}}, Sampling: terms.Sampling{MaxTokens: 3, Seed: 9}}
		ic := receipt.InputCommitment(model, req.Chat, req.Messages, req.Prompt, req.Continuation, req.Sampling)
		r.InputCommitment = ic[:]
		rd := receipt.RequestDigest(nonce, ic, model)
		s := &stream{req: req, ids: got, final: &infer.FinalFrame{Commitment: proofs}}
		g.keepEvidence(&Request{Payer: "buyer", Verification: level}, s, r, rd)
		e, err := st.GetEvidence(rd[:])
		if err == nil {
			in, derr := receipt.DecodeEvidenceInput(e.Input)
			if c := in.Commitment(model); derr != nil || !bytes.Equal(c[:], r.InputCommitment) || !bytes.Equal(e.Proofs, proofs) {
				t.Fatalf("%s: kept input %s (%v) or proofs not as signed", name, e.Input, derr)
			}
		}
		return e, rd, err
	}
	e, _, err := try("kept", terms.VerifyOptimistic, "", ids)
	if err != nil || e.Payer != "buyer" || !slices.Equal(e.Tokens, signed) {
		t.Fatalf("evidence of a paid optimistic answer: %+v, %v", e, err)
	}
	for name, tc := range map[string]struct {
		level        terms.Verification
		continuation string
		ids          []int
	}{
		"receipt level":              {terms.VerifyReceipt, "", ids},
		"a buyer who left early":     {terms.VerifyOptimistic, "", ids[:2]},
		"invalid UTF-8 continuation": {terms.VerifyOptimistic, "ab\xff", ids},
	} {
		if _, _, err := try(name, tc.level, tc.continuation, tc.ids); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: evidence kept (%v), want none", name, err)
		}
	}
}
