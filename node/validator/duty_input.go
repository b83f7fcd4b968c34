package validator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// DisputeInput is the format of DisputeEvidence.Input: the exact request
// the receipt's InputCommitment commits to, so that a committee member can
// check it against the signed receipt before trusting it.
type DisputeInput struct {
	Chat         bool            `json:"chat"`
	Messages     []terms.Message `json:"messages,omitempty"`
	Prompt       string          `json:"prompt,omitempty"`
	Continuation string          `json:"continuation,omitempty"`
	Sampling     terms.Sampling  `json:"sampling"`
}

// EncodeDisputeInput is what a disputer puts in DisputeEvidence.Input.
func EncodeDisputeInput(in DisputeInput) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("validator: encode dispute input: %w", err)
	}
	return b, nil
}

// errUnverifiable marks evidence that does not match what the provider
// signed: it proves nothing against the provider, so the member finds it
// innocent (the disputer loses the bond it staked on bad evidence).
var errUnverifiable = errors.New("evidence does not match the signed receipt")

// errCannotTell marks evidence this member cannot re-execute faithfully
// (a resumed answer): it abstains rather than guess.
var errCannotTell = errors.New("cannot re-execute")

// judge re-executes one disputed answer on eng, which holds the model's
// real weights, and returns the verdict with why.
func judge(ctx context.Context, eng inference.Engine, ev ledger.DisputeEvidence, tol commit.Tolerance) (ledger.Verdict, string, error) {
	_, r, err := receipt.Parse(ev.Receipt)
	if err != nil {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: receipt: %w", errUnverifiable, err)
	}
	var in DisputeInput
	if err := json.Unmarshal(ev.Input, &in); err != nil {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: input: %w", errUnverifiable, err)
	}
	if got := receipt.InputCommitment(r.ModelID, in.Chat, in.Messages, in.Prompt, in.Continuation, in.Sampling); string(got[:]) != string(r.InputCommitment) {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: input commitment %x, receipt signs %x", errUnverifiable, got, r.InputCommitment)
	}
	if in.Continuation != "" {
		return ledger.VerdictAbstain, "", fmt.Errorf("%w: a resumed answer's continuation tokens are not in the evidence", errCannotTell)
	}
	output := make([]int, len(ev.Tokens))
	for i, t := range ev.Tokens {
		output[i] = int(t)
	}
	// The tokens are the disputer's word: only tokens that spell the
	// signed output may be re-executed, or a disputer could convict an
	// honest provider by altering them.
	if got := receipt.OutputHash(eng.Detokenize(output)); string(got[:]) != string(r.OutputHash) {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: tokens spell output %x, receipt signs %x", errUnverifiable, got, r.OutputHash)
	}
	proofs, err := commit.Decode(ev.Proofs)
	if err != nil {
		return ledger.VerdictInnocent, "", fmt.Errorf("%w: proofs: %w", errUnverifiable, err)
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
		return ledger.VerdictAbstain, "", fmt.Errorf("validator: encode disputed prompt: %w", err)
	}
	// commit.VerifyWithEngine in two steps: an engine failure is this
	// member's problem (retried next poll), never the provider's guilt.
	scored, err := eng.Score(ctx, prompt, output, commit.TopK)
	if err != nil {
		return ledger.VerdictNone, "", fmt.Errorf("validator: re-execute: %w", err)
	}
	rep, err := commit.Verify(proofs, scored, eng.Info().VocabSize, tol)
	if err != nil {
		// Proofs of the wrong shape for this answer (step count, vocab)
		// cannot come from the real weights on these tokens.
		return ledger.VerdictGuilty, err.Error(), nil
	}
	why := fmt.Sprintf("%d of %d chunks failed", rep.Failed, len(rep.Chunks))
	if !rep.OK {
		return ledger.VerdictGuilty, why, nil
	}
	return ledger.VerdictInnocent, why, nil
}
