package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/llm"
)

// referee is the checker's own embedded engine on the devnet's model: the
// embedded engine is deterministic (same model, request and seed, same
// text), so it recomputes what every complete answer must have said.
type referee struct{ eng *llm.Engine }

// openReferee loads the model directory, pinned to the catalog ID the
// devnet serves (the manifest's model is its name, not its ID).
func openReferee(dir string) (*referee, error) {
	_, root, err := catalog.Build(dir)
	if err != nil {
		return nil, fmt.Errorf("chaos: referee: %w", err)
	}
	id := inference.ModelID(root)
	eng, err := llm.Open(dir, llm.Options{Threads: 1, ModelID: &id})
	if err != nil {
		return nil, fmt.Errorf("chaos: referee: %w", err)
	}
	return &referee{eng: eng}, nil
}

// answer is the text and finish reason a provider must send for r: the
// chat request as the OpenAI layer converts it (temperature 1, top_p 1,
// the request's seed and max_tokens), each token's text made valid UTF-8
// the way a provider puts it on the wire.
func (f *referee) answer(ctx context.Context, r chatRequest) (string, string, error) {
	req := inference.GenerateRequest{
		Messages: r.messages(),
		Sampling: inference.Sampling{Temperature: 1, TopP: 1, Seed: uint64(r.Seed), MaxTokens: r.MaxTokens},
	}
	var text strings.Builder
	res, err := f.eng.Generate(ctx, req, func(t inference.Token) error {
		text.WriteString(inference.ValidText(t.Text))
		return nil
	})
	if err != nil {
		return "", "", fmt.Errorf("chaos: referee: %w", err)
	}
	return text.String(), res.FinishReason, nil
}
