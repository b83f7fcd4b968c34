package llm

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/inference"
)

var _ inference.AnswerResampler = (*Engine)(nil)

// ResampleAnswer is Resample for output that follows answered tokens of
// the same answer, the last of prompt: under a response format, each
// position is drawn among the tokens the grammar allows after the answer
// so far, as Generate drew it, so a provider that ignored the mask signs
// tokens the sampler does not draw.
func (e *Engine) ResampleAnswer(ctx context.Context, prompt []int, answered int, output []int, k int, sp inference.Sampling) ([][]inference.LogProb, []int, error) {
	if err := checkSampling(sp); err != nil {
		return nil, nil, err
	}
	if answered < 0 || answered > len(prompt) {
		return nil, nil, fmt.Errorf("llm: resample: %d answered tokens of a %d-token prefix", answered, len(prompt))
	}
	masks, err := e.replayMasks(prompt[len(prompt)-answered:], output, sp)
	if err != nil {
		return nil, nil, err
	}
	return e.score(ctx, prompt, output, k, &sp, masks)
}

// replayMasks returns the mask of each output position after before, or
// nil for an unconstrained request. Once the signed tokens leave the
// grammar no token is allowed: nothing after that point was drawn under
// the mask.
func (e *Engine) replayMasks(before, output []int, sp inference.Sampling) ([][]int, error) {
	con, err := e.newConstraint(sp)
	if con == nil || err != nil {
		return nil, err
	}
	dead := false
	for _, t := range before {
		if !dead && con.accept(t) != nil {
			dead = true
		}
	}
	masks := make([][]int, len(output))
	for j, t := range output {
		if dead {
			masks[j] = []int{}
			continue
		}
		ids, err := con.allowed(constraintBudget(sp, len(before)+j))
		if err != nil {
			masks[j], dead = []int{}, true
			continue
		}
		masks[j] = ids
		if con.accept(t) != nil {
			dead = true
		}
	}
	return masks, nil
}

// constraintBudget is the budget of the answer's token at index produced:
// what max_tokens leaves (0, no limit, without one). It never depends on
// an engine's configured context, which a committee member's may differ
// from the provider's.
func constraintBudget(sp inference.Sampling, produced int) int {
	if sp.MaxTokens <= 0 {
		return 0
	}
	return max(sp.MaxTokens-produced, 1)
}
