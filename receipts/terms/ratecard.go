package terms

// RateCard prices each unit in integer micro-units, plus a per-call
// minimum (DESIGN.md, Pricing and quotes).
type RateCard struct {
	InputTokens  uint64 `cbor:"1,keyasint" json:"input_tokens" toml:"input_tokens"`
	OutputTokens uint64 `cbor:"2,keyasint" json:"output_tokens" toml:"output_tokens"`
	CachedTokens uint64 `cbor:"3,keyasint" json:"cached_tokens" toml:"cached_tokens"`
	PixelSteps   uint64 `cbor:"4,keyasint" json:"pixel_steps" toml:"pixel_steps"`
	AudioMs      uint64 `cbor:"5,keyasint" json:"audio_ms" toml:"audio_ms"`
	Minimum      uint64 `cbor:"6,keyasint" json:"minimum" toml:"minimum"`
	// ExpertTokens prices an expert-token of a MoE model whose experts
	// run at holders (Units.ExpertTokens): the serving provider pays its
	// holders from it. Omitted when zero, so a card without it encodes
	// (and is signed in announcements) exactly as before.
	ExpertTokens uint64 `cbor:"7,keyasint,omitempty" json:"expert_tokens,omitempty" toml:"expert_tokens"`
}
