package committest

import (
	"context"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
)

// Generate runs gr on eng with commit.TopK log-probs per step and returns
// the result, the valid text as the buyer receives it, and the proofs of
// the answer; an error fails the test.
func Generate(t testing.TB, eng inference.Engine, gr inference.GenerateRequest) (inference.Result, string, []commit.Proof) {
	t.Helper()
	gr.LogProbs = commit.TopK
	var steps [][]inference.LogProb
	var text strings.Builder
	res, err := eng.Generate(context.Background(), gr, func(tok inference.Token) error {
		steps = append(steps, tok.TopK)
		text.WriteString(inference.ValidText(tok.Text))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := commit.Build(steps, eng.Info().VocabSize)
	if err != nil {
		t.Fatal(err)
	}
	return res, text.String(), proofs
}
