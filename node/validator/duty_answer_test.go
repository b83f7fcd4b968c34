package validator

import (
	"fmt"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/commit/committest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// answer is one optimistic answer as a provider serves it: generated with
// top-k log-probs on eng, its proofs built, the request it answers, and
// the text as the provider's infer server sends and signs it (each piece
// through inference.ValidText), beside the raw bytes the tokens spell.
type answer struct {
	in     DisputeInput
	text   string
	raw    string // the token pieces' bytes, concatenated
	split  bool   // a multi-byte character spans a token boundary
	tokens []uint32
	proofs []commit.Proof
}

// invalid reports whether the answer's tokens spell bytes that are not
// UTF-8, so the signed text differs from them.
func (a answer) invalid() bool { return !utf8.ValidString(a.raw) }

func generateAnswer(t testing.TB, eng inference.Engine, i int) answer {
	t.Helper()
	in := DisputeInput{Chat: true, Messages: []terms.Message{{Role: "user", Content: fmt.Sprintf("Question %d: tell me about verification", i)}},
		Sampling: terms.Sampling{Temperature: []float64{0, 0.7, 1}[i%3], TopP: 0.95, Seed: uint64(i), MaxTokens: 8 + (i*7)%41}}
	return generate(t, eng, in)
}

// generate serves in on eng as the provider does and returns the answer.
func generate(t testing.TB, eng inference.Engine, in DisputeInput) answer {
	t.Helper()
	res, text, proofs := committest.Generate(t, eng, inference.GenerateRequest{Messages: in.Messages, Prompt: in.Prompt, Sampling: in.Sampling})
	a := answer{in: in, text: text, proofs: proofs}
	var raw []byte
	for _, id := range res.Tokens {
		a.tokens = append(a.tokens, uint32(id))
		piece := eng.Detokenize([]int{id})
		// A character is split when a piece starts inside it (a
		// continuation byte) after an unfinished sequence.
		if len(piece) > 0 && !utf8.RuneStart(piece[0]) && len(raw) > 0 && !utf8.FullRune(lastSeq(raw)) {
			a.split = true
		}
		raw = append(raw, piece...)
	}
	a.raw = string(raw)
	return a
}

// lastSeq returns the bytes of b from its last rune start.
func lastSeq(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-4; i-- {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b[len(b)-1:]
}

// signAnswer is the dispute evidence of answer a as machine m served it
// on model under nonce: the receipt it signs (binding the proofs' hash
// and the token IDs), the proofs, tokens and request.
func signAnswer(t testing.TB, m *ledgertest.Machine, model inference.ModelID, nonce []byte, a answer) ledger.DisputeEvidence {
	t.Helper()
	return signPaidAnswer(t, m, model, nonce, a, nil)
}

// signPaidAnswer is signAnswer for a call paid from payer's own escrow
// (payer its settler too), as the chain settles only a record whose payer
// and settler the receipt names; nil payer signs an unpaid call.
func signPaidAnswer(t testing.TB, m *ledgertest.Machine, model inference.ModelID, nonce []byte, a answer, payer []byte) ledger.DisputeEvidence {
	t.Helper()
	input := a.in.Commitment(model[:])
	out, ch, th, mid := receipt.OutputHash(a.text), commit.Hash(a.proofs), receipt.TokensHash(a.tokens), m.MachineID()
	env, err := receipt.Sign(m.Session, &receipt.Receipt{ModelID: model[:], Engine: "embedded", MachineID: mid[:],
		ProviderPeer: []byte(m.PeerID), Nonce: nonce, InputCommitment: input[:], OutputHash: out[:],
		Units: terms.Units{OutputTokens: uint64(len(a.tokens))}, CommitmentHash: ch[:], TokensHash: th[:], FinishReason: "length", TimeMs: time.Now().UnixMilli(),
		Payer: payer, Settler: payer})
	if err != nil {
		t.Fatal(err)
	}
	in, err := EncodeDisputeInput(a.in)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.DisputeEvidence{Receipt: env, Proofs: commit.Encode(a.proofs), Tokens: a.tokens, Input: in}
}

// EncodeDisputeInput is what a disputer puts in DisputeEvidence.Input.
func EncodeDisputeInput(in DisputeInput) ([]byte, error) {
	b, err := receipt.EncodeEvidenceInput(in)
	if err != nil {
		return nil, fmt.Errorf("validator: %w", err)
	}
	return b, nil
}
