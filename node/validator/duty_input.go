package validator

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// DisputeInput is the format of DisputeEvidence.Input: the exact request
// the receipt's InputCommitment commits to. The chain decodes it too
// (to refuse evidence whose input is not the signed one), so its format is
// receipt.EvidenceInput.
type DisputeInput = receipt.EvidenceInput

// errUnverifiable marks evidence that is not what the provider signed.
// The chain refuses such evidence when the dispute opens, so a member
// sees it only if the chain's checks and its own ever disagree; it proves
// nothing against the provider, so the member finds it innocent rather
// than abstaining: an abstention lapses the dispute and returns the bond
// of a disputer that staked it on bent evidence.
var errUnverifiable = errors.New("evidence does not match the signed receipt")

// errCannotTell marks evidence this member cannot re-execute faithfully
// (a resumed answer, a prompt its engine will not encode, a recomputation
// of another shape than the signed answer): it abstains rather than guess.
var errCannotTell = errors.New("cannot re-execute")

// judge re-executes one disputed answer on eng, which holds the model's
// real weights, and returns the verdict with why. Only the tokens the
// provider signed (the receipt's TokensHash) are re-executed, after the
// input the receipt commits to, and only up to the end of the chunk the
// dispute names (one prefill; logits for that chunk's steps alone). The
// verdict is guilty only when that chunk's recomputed log-probs disagree
// with its signed proof, a signed token in it is not the one the sampler
// draws under the signed sampling terms, or a signed token is one the
// weights cannot emit: nothing about the evidence's own shape can
// convict, and a named chunk that verifies acquits whatever the others
// hold.
func judge(ctx context.Context, eng inference.Engine, ev ledger.DisputeEvidence, tol commit.Tolerance) (ledger.Verdict, string, error) {
	proofs, in, err := checkSigned(ev)
	if err != nil {
		return ledger.VerdictInnocent, "", err
	}
	if in.Continuation != "" {
		return ledger.VerdictAbstain, "", fmt.Errorf("%w: a resumed answer's continuation tokens are not in the evidence", errCannotTell)
	}
	vocab := eng.Info().VocabSize
	output := make([]int, len(ev.Tokens))
	for i, t := range ev.Tokens {
		if uint64(t) >= uint64(vocab) {
			// The provider signed this ID (TokensHash), and the real
			// weights never emit a token outside their vocabulary.
			return ledger.VerdictGuilty, fmt.Sprintf("signed token %d at step %d is outside the model's vocabulary of %d", t, i, vocab), nil
		}
		output[i] = int(t)
	}
	// Tokenized as the provider's infer server does: chat messages through
	// the model's template, a completion prompt as raw text.
	gr := inference.GenerateRequest{Sampling: in.Sampling}
	if in.Chat {
		gr.Messages = in.Messages
	} else {
		gr.Prompt = in.Prompt
	}
	prompt, err := eng.EncodePrompt(gr)
	if err != nil {
		return ledger.VerdictAbstain, "", fmt.Errorf("%w: encode the disputed prompt: %w", errCannotTell, err)
	}
	chunk := int(ev.Chunk)
	if chunk >= len(proofs) {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: disputed chunk %d of %d", errUnverifiable, chunk, len(proofs))
	}
	// Only the disputed chunk is judged: one prefill of the prompt and the
	// answer up to the chunk's end, logits only for the chunk's steps.
	start := chunk * commit.StepsPerChunk
	end := start + proofs[chunk].Steps()
	prefix := append(prompt[:len(prompt):len(prompt)], output[:start]...)
	scored, drawn, err := rescore(ctx, eng, prefix, start, output[start:end], in.Sampling)
	if err != nil {
		// An engine failure is this member's problem (retried next
		// poll), never the provider's guilt.
		return ledger.VerdictNone, "", fmt.Errorf("validator: re-execute: %w", err)
	}
	rep, err := commit.Verify(proofs[chunk:chunk+1], scored, vocab, tol)
	if err != nil {
		// The signed proof covers one step per signed token (checked
		// above), so a recomputation of another shape is this engine's
		// doing (a context too short, say), not evidence of guilt.
		return ledger.VerdictAbstain, "", fmt.Errorf("%w: %w", errCannotTell, err)
	}
	// The sampler is a pure function of the logits, the signed sampling
	// terms and the position, and the embedded engine computes a
	// position's logits bit for bit whatever the batch: a signed token
	// the sampler does not draw was not sampled as signed (another seed,
	// a token appended or an end of turn forced).
	redrawn, at := 0, -1
	for j, d := range drawn {
		if d != output[start+j] {
			if redrawn++; at < 0 {
				at = start + j
			}
		}
	}
	c := rep.Chunks[0]
	why := fmt.Sprintf("chunk %d of %d (steps %d..%d): %d exponent mismatches, mean mantissa %.2f, median %.2f; %d signed tokens not drawn by the sampler",
		chunk, len(proofs), start, end-1, c.ExpMismatch, c.MeanMantissa, c.MedianMantissa, redrawn)
	switch {
	case !rep.OK:
		return ledger.VerdictGuilty, why, nil
	case redrawn > 0:
		return ledger.VerdictGuilty, fmt.Sprintf("%s (first at step %d)", why, at), nil
	}
	return ledger.VerdictInnocent, why, nil
}

// rescore recomputes the top-k log-probs that predicted each of output
// after prefix, and, where the engine can say, the token its sampler
// draws at each position under sp (nil otherwise); prefix ends with the
// answered tokens of the answer before output, which a response format's
// mask depends on.
func rescore(ctx context.Context, eng inference.Engine, prefix []int, answered int, output []int, sp inference.Sampling) ([][]inference.LogProb, []int, error) {
	if rs, ok := eng.(inference.AnswerResampler); ok {
		return rs.ResampleAnswer(ctx, prefix, answered, output, commit.TopK, sp)
	}
	if rs, ok := eng.(inference.Resampler); ok {
		return rs.Resample(ctx, prefix, output, commit.TopK, sp)
	}
	scored, err := eng.Score(ctx, prefix, output, commit.TopK)
	return scored, nil, err
}

// checkSigned checks that ev is exactly an answer its receipt signs,
// as the chain did when the dispute opened (ledger checkEvidence): the
// receipt signs a commitment hash and the token IDs, the tokens hash to
// them and are as many as the proofs' decode steps, the proofs hash to the commitment, and the input is the
// committed one. Every failure wraps errUnverifiable.
func checkSigned(ev ledger.DisputeEvidence) ([]commit.Proof, receipt.EvidenceInput, error) {
	var in receipt.EvidenceInput
	_, r, err := receipt.Parse(ev.Receipt)
	if err != nil {
		return nil, in, fmt.Errorf("%w: receipt: %w", errUnverifiable, err)
	}
	if len(r.CommitmentHash) == 0 || len(r.TokensHash) == 0 {
		return nil, in, fmt.Errorf("%w: the receipt signs no logit commitment or no token IDs", errUnverifiable)
	}
	if h := receipt.TokensHash(ev.Tokens); len(ev.Tokens) == 0 || !bytes.Equal(h[:], r.TokensHash) {
		return nil, in, fmt.Errorf("%w: %d token IDs hash to %x, receipt signs %x", errUnverifiable, len(ev.Tokens), h, r.TokensHash)
	}
	proofs, err := commit.Decode(ev.Proofs)
	if err != nil {
		return nil, in, fmt.Errorf("%w: proofs: %w", errUnverifiable, err)
	}
	if h := commit.Hash(proofs); !bytes.Equal(h[:], r.CommitmentHash) {
		return nil, in, fmt.Errorf("%w: proofs hash to %x, receipt signs %x", errUnverifiable, h, r.CommitmentHash)
	}
	steps := 0
	for _, p := range proofs {
		steps += p.Steps()
	}
	if steps != len(ev.Tokens) {
		return nil, in, fmt.Errorf("%w: proofs cover %d steps, receipt signs %d token IDs", errUnverifiable, steps, len(ev.Tokens))
	}
	if in, err = receipt.DecodeEvidenceInput(ev.Input); err != nil {
		return nil, in, fmt.Errorf("%w: %w", errUnverifiable, err)
	}
	if got := in.Commitment(r.ModelID); !bytes.Equal(got[:], r.InputCommitment) {
		return nil, in, fmt.Errorf("%w: input commitment %x, receipt signs %x", errUnverifiable, got, r.InputCommitment)
	}
	return proofs, in, nil
}
