package committest

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
)

// VerifyWithEngine recomputes the steps of output after prompt with one
// prefill on e (which must hold the committed weights) and verifies the
// proofs: the whole answer at once, where a validator judges one disputed
// chunk with its own sampler check.
func VerifyWithEngine(ctx context.Context, e inference.Engine, prompt, output []int, proofs []commit.Proof, tol commit.Tolerance) (commit.Report, error) {
	scored, err := e.Score(ctx, prompt, output, commit.TopK)
	if err != nil {
		return commit.Report{}, fmt.Errorf("committest: recompute: %w", err)
	}
	return commit.Verify(proofs, scored, e.Info().VocabSize, tol)
}
