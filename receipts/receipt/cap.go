package receipt

import (
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// OutputEndTokens is how many output tokens Cap allows beyond the bytes of
// output text: the end-of-turn token a model emits last without releasing
// any text.
const OutputEndTokens = 1

// CapReport says how Cap reached each billed figure.
type CapReport struct {
	Claimed terms.Units `json:"claimed"` // the provider's claim

	OutputExact     bool `json:"output_exact"`      // the gateway's tokenizer count replaced the claim
	OutputMaxTokens bool `json:"output_max_tokens"` // capped at max_tokens
	OutputText      bool `json:"output_text"`       // capped at output text bytes + OutputEndTokens
	OutputWire      bool `json:"output_wire"`       // capped at bytes received

	InputExact bool `json:"input_exact"` // the gateway's tokenizer count replaced the claim
	InputWire  bool `json:"input_wire"`  // input + cached capped at bytes sent

	// Unbacked: pixel steps or audio ms were claimed, which nothing the
	// gateway observes on a text request can back; they are billed as 0.
	Unbacked bool `json:"unbacked"`
}

// Cap returns the units to bill for a claim, each dimension bounded by what
// the gateway observed:
//
//   - Output tokens: the claim, or ExactOutputTokens when it is ≥ 0; then at
//     most MaxTokens (when > 0), at most len(OutputText) + OutputEndTokens
//     (every token a model releases carries at least one byte of text; only
//     the final end-of-turn token carries none), and at most BytesReceived.
//     Text a stop sequence removed is not billed.
//   - Prompt tokens (InputTokens + CachedTokens): the claim, or
//     ExactInputTokens when it is ≥ 0, in which case cached tokens keep the
//     claimed share (at most the exact count) and the rest are input tokens.
//     The total is at most BytesSent: a prompt token carries at least one
//     byte, and the request frame's fixed fields (nonce, model ID, field
//     keys) outnumber the template tokens a provider adds. Over the bound,
//     input tokens are cut first, then cached tokens.
//   - Pixel steps and audio ms: 0, as nothing observed backs them.
//
// All arithmetic is on uint64 and cannot overflow.
func Cap(claimed terms.Units, o Observed) (terms.Units, CapReport) {
	rep := CapReport{Claimed: claimed}
	var u terms.Units

	u.OutputTokens = claimed.OutputTokens
	if o.ExactOutputTokens >= 0 {
		u.OutputTokens, rep.OutputExact = uint64(o.ExactOutputTokens), true
	}
	if o.MaxTokens > 0 {
		u.OutputTokens = capAt(u.OutputTokens, uint64(o.MaxTokens), &rep.OutputMaxTokens)
	}
	u.OutputTokens = capAt(u.OutputTokens, uint64(len(o.OutputText))+OutputEndTokens, &rep.OutputText)
	u.OutputTokens = capAt(u.OutputTokens, nonNeg(o.BytesReceived), &rep.OutputWire)

	u.InputTokens, u.CachedTokens = claimed.InputTokens, claimed.CachedTokens
	if o.ExactInputTokens >= 0 {
		exact := uint64(o.ExactInputTokens)
		u.CachedTokens = min(claimed.CachedTokens, exact)
		u.InputTokens, rep.InputExact = exact-u.CachedTokens, true
	}
	sent := nonNeg(o.BytesSent)
	u.CachedTokens = capAt(u.CachedTokens, sent, &rep.InputWire)
	u.InputTokens = capAt(u.InputTokens, sent-u.CachedTokens, &rep.InputWire)

	rep.Unbacked = claimed.PixelSteps != 0 || claimed.AudioMs != 0
	return u, rep
}

// capAt returns min(v, bound), setting *capped when v exceeded bound.
func capAt(v, bound uint64, capped *bool) uint64 {
	if v > bound {
		*capped = true
		return bound
	}
	return v
}

func nonNeg(v int64) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}
