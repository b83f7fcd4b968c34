package validator

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// emptyPiece returns a token whose piece spells nothing (an end-of-text
// or special token), so appending it leaves the text and output hash as
// they were: the forgery that once convicted every honest provider.
func emptyPiece(t testing.TB, eng inference.Engine) uint32 {
	t.Helper()
	for id := range eng.Info().VocabSize {
		if eng.Detokenize([]int{id}) == "" {
			return uint32(id)
		}
	}
	t.Fatal("the model has no token with an empty piece")
	return 0
}

// forgedEvidence is every way a disputer could alter ev, the evidence of
// an answer of more than one proof chunk; other is the evidence of
// another answer of the same provider. The appended empty-piece token
// comes first.
type forgery struct {
	name string
	ev   ledger.DisputeEvidence
}

func forgedEvidence(t testing.TB, ev, other ledger.DisputeEvidence, empty uint32) []forgery {
	t.Helper()
	edit := func(f func(e *ledger.DisputeEvidence)) ledger.DisputeEvidence {
		e := ev
		e.Tokens = slices.Clone(ev.Tokens)
		f(&e)
		return e
	}
	input := func(f func(in *DisputeInput)) ledger.DisputeEvidence {
		in, err := receipt.DecodeEvidenceInput(ev.Input)
		if err != nil {
			t.Fatal(err)
		}
		f(&in)
		e := ev
		if e.Input, err = EncodeDisputeInput(in); err != nil {
			t.Fatal(err)
		}
		return e
	}
	proofs := func(f func(ps []commit.Proof) []commit.Proof) ledger.DisputeEvidence {
		ps, err := commit.Decode(ev.Proofs)
		if err != nil || len(ps) < 2 {
			t.Fatalf("the answer has %d proof chunks (%v), want at least 2", len(ps), err)
		}
		e := ev
		e.Proofs = commit.Encode(f(ps))
		return e
	}
	return []forgery{
		{"appended empty-piece token", edit(func(e *ledger.DisputeEvidence) { e.Tokens = append(e.Tokens, empty) })},
		{"prepended empty-piece token", edit(func(e *ledger.DisputeEvidence) { e.Tokens = append([]uint32{empty}, e.Tokens...) })},
		{"dropped last token", edit(func(e *ledger.DisputeEvidence) { e.Tokens = e.Tokens[:len(e.Tokens)-1] })},
		{"dropped first token", edit(func(e *ledger.DisputeEvidence) { e.Tokens = e.Tokens[1:] })},
		{"replaced token", edit(func(e *ledger.DisputeEvidence) { e.Tokens[len(e.Tokens)/2] ^= 1 })},
		{"swapped tokens", edit(func(e *ledger.DisputeEvidence) { e.Tokens[0], e.Tokens[1] = e.Tokens[1], e.Tokens[0]+1 })},
		{"another answer's tokens", edit(func(e *ledger.DisputeEvidence) { e.Tokens = other.Tokens })},
		{"reordered proofs", proofs(func(ps []commit.Proof) []commit.Proof { return append([]commit.Proof{ps[1], ps[0]}, ps[2:]...) })},
		{"dropped last proof", proofs(func(ps []commit.Proof) []commit.Proof { return ps[:len(ps)-1] })},
		{"another answer's proofs", edit(func(e *ledger.DisputeEvidence) { e.Proofs = other.Proofs })},
		{"other sampling seed", input(func(in *DisputeInput) { in.Sampling.Seed++ })},
		{"other temperature", input(func(in *DisputeInput) { in.Sampling.Temperature += 0.5 })},
		{"other max tokens", input(func(in *DisputeInput) { in.Sampling.MaxTokens++ })},
		{"other prompt", input(func(in *DisputeInput) { in.Messages = []terms.Message{{Role: "user", Content: "something else"}} })},
		{"no input", edit(func(e *ledger.DisputeEvidence) { e.Input = nil })},
		{"another receipt", edit(func(e *ledger.DisputeEvidence) { e.Receipt = other.Receipt })},
	}
}

// TestJudgeNeverConvictsForgedEvidence: a member handed any forgery of an
// honest answer's evidence (as if the chain had let it through) finds it
// innocent as not what the provider signed, never guilty; the exact
// evidence is innocent on its merits.
func TestJudgeNeverConvictsForgedEvidence(t *testing.T) {
	eng := openGenerated(t, filepath.Join(t.TempDir(), "m"), modelgen.DevnetOptions())
	m := testMachine(t, filepath.Join(t.TempDir(), "machine"))
	ctx := context.Background()
	a, b := longAnswer(t, eng, 1), longAnswer(t, eng, 2)
	ev := signAnswer(t, m, eng.Info().ID, []byte("nonce-0123456789"), a)
	other := signAnswer(t, m, eng.Info().ID, []byte("nonce-9876543210"), b)
	if v, why, err := judge(ctx, eng, ev, commit.DefaultTolerance); v != ledger.VerdictInnocent || err != nil {
		t.Fatalf("the signed evidence: %s %s %v", v, why, err)
	}
	for _, f := range forgedEvidence(t, ev, other, emptyPiece(t, eng)) {
		v, why, err := judge(ctx, eng, f.ev, commit.DefaultTolerance)
		if v != ledger.VerdictInnocent || !errors.Is(err, errUnverifiable) {
			t.Errorf("%s: %s (%s) %v, want innocent as unverifiable", f.name, v, why, err)
		}
	}
}

// TestJudgeSignedTokenOutsideVocabulary: a provider that signs a token ID
// the model cannot emit (its tokens hash binds it, so no disputer put it
// there) is convicted without re-execution; the same answer as generated
// is acquitted.
func TestJudgeSignedTokenOutsideVocabulary(t *testing.T) {
	eng := openGenerated(t, filepath.Join(t.TempDir(), "m"), modelgen.DevnetOptions())
	m := testMachine(t, filepath.Join(t.TempDir(), "machine"))
	a := generateAnswer(t, eng, 4)
	if v, why, err := judge(t.Context(), eng, signAnswer(t, m, eng.Info().ID, make([]byte, 16), a), commit.DefaultTolerance); v != ledger.VerdictInnocent || err != nil {
		t.Fatalf("the answer as generated: %s %s %v", v, why, err)
	}
	a.tokens = slices.Clone(a.tokens)
	a.tokens[len(a.tokens)-1] = uint32(eng.Info().VocabSize)
	v, why, err := judge(t.Context(), eng, signAnswer(t, m, eng.Info().ID, make([]byte, 16), a), commit.DefaultTolerance)
	if v != ledger.VerdictGuilty || err != nil {
		t.Fatalf("a signed token outside the vocabulary: %s %s %v", v, why, err)
	}
}

// longAnswer is an honest answer of more than one proof chunk: the first
// from seed i on that the model does not end early.
func longAnswer(t testing.TB, eng inference.Engine, i int) answer {
	t.Helper()
	for seed := i; seed < i+100; seed++ {
		in := DisputeInput{Chat: true, Messages: []terms.Message{{Role: "user", Content: "Tell me a long story, please."}},
			Sampling: terms.Sampling{Temperature: 0.8, Seed: uint64(seed) * 7919, MaxTokens: commit.StepsPerChunk + 8}}
		if a := generate(t, eng, in); len(a.proofs) > 1 {
			return a
		}
	}
	t.Fatal("the model ends every answer within one proof chunk")
	return answer{}
}

// TestDutyForgedEvidenceNeverConvicts: on a real 4-validator chain whose
// validators run the committee duty, every forgery of an honest answer's
// evidence (its bytes invalid UTF-8, the appended empty-piece token
// first) is refused when opened, in its block or at the mempool, taking
// no bond; the honest answer's own evidence is then acquitted; the
// provider's bond and standing are untouched throughout.
func TestDutyForgedEvidenceNeverConvicts(t *testing.T) {
	dir := t.TempDir()
	o := modelgen.DevnetOptions()
	dirs := heldModels(t, dir, o)
	honest := openGenerated(t, filepath.Join(dir, "provider"), o)
	dn := startDisputeNet(t, dirs, 20)
	var a answer
	for i := 1; !a.invalid(); i++ {
		if a = longAnswer(t, honest, i); i > 50 {
			t.Fatal("no long answer spells invalid UTF-8")
		}
	}
	b := longAnswer(t, honest, 100)
	subj, rec, ev := dn.settleable(a)
	_, recB, evB := dn.settleable(b)
	dn.submit(dn.op, &ledger.Settlement{Records: []receipt.PaymentRecord{rec, recB}})
	p0, dis0 := dn.provider(), dn.balance(dn.dis)
	forged := forgedEvidence(t, ev, evB, emptyPiece(t, honest))
	for _, f := range forged {
		_, err := dn.sub(dn.dis).Submit(dn.ctx, &ledger.DisputeOpen{Subject: subj, Bond: 1000, Evidence: f.ev})
		if ledger.CodeOf(err) != ledger.CodeBadEvidence {
			t.Errorf("%s: opened with %v, want refused as bad evidence", f.name, err)
		}
	}
	id := ledger.DisputeID(subj)
	if _, ok, err := dn.net.Nodes[0].Dispute(dn.ctx, id); ok || err != nil {
		t.Fatalf("a forged dispute exists: %v %v", ok, err)
	}
	if got, fees := dn.balance(dn.dis), uint64(len(forged))*dn.params.FeePerTx; got+fees < dis0 {
		t.Fatalf("disputer balance %d after %d refused opens, was %d: more than their fees (%d) taken", got, len(forged), dis0, fees)
	}
	if p := dn.provider(); p.Bond != p0.Bond || p.SlashedUntil != 0 || p.OpenDisputes != 0 {
		t.Fatalf("provider after the forgeries: %+v, was %+v", p, p0)
	}
	res := dn.submit(dn.dis, &ledger.DisputeOpen{Subject: subj, Bond: 1000, Evidence: ev})
	d := dn.verdict(id)
	if d.Status != ledger.DisputeInnocent || d.Slashed != 0 {
		t.Fatalf("the honest answer's own evidence: %+v", d)
	}
	if p := dn.provider(); p.Bond != p0.Bond || p.SlashedUntil != 0 {
		t.Fatalf("honest provider after its acquittal: bond %d (was %d), slashed until %d", p.Bond, p0.Bond, p.SlashedUntil)
	}
	t.Logf("%d forgeries refused; the signed evidence (%d tokens, invalid UTF-8) acquitted %d blocks after opening",
		len(forged), len(a.tokens), d.ResolveHeight-res.Height)
}
