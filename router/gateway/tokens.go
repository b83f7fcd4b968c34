package gateway

import (
	"strings"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// TokenCounter counts one model's tokens exactly. A gateway that holds the
// model's tokenizer bills prompt and output tokens by its own count rather
// than the provider's claim, each still capped by the wire.
type TokenCounter interface {
	// EncodePrompt returns the prompt tokens the engine feeds for req.
	EncodePrompt(req inference.GenerateRequest) ([]int, error)
	// Detokenize returns the text of ids.
	Detokenize(ids []int) string
}

// exactCounts sets o's exact counts (ids: the output token IDs billed) where the gateway holds the served
// model's tokenizer: the prompt as the engine encodes it, and the output
// as the number of token IDs received, when they spell the text received
// (see idsSpell; an engine that sends no IDs leaves the output to the
// claim and its caps).
func (g *Gateway) exactCounts(s *stream, ids []int, own string, o *receipt.Observed) {
	var id inference.ModelID
	if len(s.req.ModelID) != len(id) {
		return // infer.Request.Validate refuses it before it is sent
	}
	tc := g.tokenizers[inference.ModelID(s.req.ModelID)]
	if tc == nil {
		return
	}
	gr := inference.GenerateRequest{Prompt: s.req.Prompt}
	if s.req.Chat {
		gr = inference.GenerateRequest{Messages: s.req.Messages}
	}
	if ids, err := tc.EncodePrompt(gr); err == nil {
		o.ExactInputTokens = len(ids)
	}
	if len(ids) > 0 && idsSpell(inference.ValidText(tc.Detokenize(ids)), own, s.req.Sampling.Stop) {
		o.ExactOutputTokens = len(ids)
	}
}

// idsSpell reports whether the text of the token IDs received, full,
// accounts for the text received, own: equal, or own followed by a stop
// sequence (and whatever else its last token carried), which the engine
// removes from the answer but did generate.
func idsSpell(full, own string, stops []string) bool {
	if full == own {
		return true
	}
	rest, ok := strings.CutPrefix(full, own)
	if !ok {
		return false
	}
	for _, st := range stops {
		if st != "" && strings.HasPrefix(rest, st) {
			return true
		}
	}
	return false
}
