package terms

// Sampling holds the sampling parameters of a request.
type Sampling struct {
	// Temperature 0 selects greedy decoding (argmax, lowest ID on ties).
	Temperature float64 `json:"temperature"`
	// TopP keeps the smallest set of most likely tokens whose probability
	// reaches TopP; 0 or >= 1 disables it.
	TopP float64 `json:"top_p"`
	// TopK keeps the TopK most likely tokens; 0 disables it.
	TopK int `json:"top_k"`
	// Seed keys the sampler's randomness together with the token position.
	Seed uint64 `json:"seed"`
	// MaxTokens bounds the output tokens, counting Continuation tokens;
	// 0 means up to the context length.
	MaxTokens int `json:"max_tokens"`
	// Stop sequences end the output; the matched text is not returned.
	Stop []string `json:"stop,omitempty"`
	// Format, when set, constrains the answer to JSON (response_format):
	// the embedded engine masks the logits by its grammar, and a
	// committee replays the same mask.
	Format *ResponseFormat `json:"response_format,omitempty"`
	// Tools the model may call, rendered by the chat template; with
	// ToolChoice "required" or "function" (naming ToolName) the answer is
	// constrained to a call. Empty for a plain request, which encodes as
	// before these fields existed.
	Tools      []Tool `json:"tools,omitempty"`
	ToolChoice string `json:"tool_choice,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// NoParallelToolCalls is parallel_tool_calls: false.
	NoParallelToolCalls bool `json:"no_parallel_tool_calls,omitempty"`
}

// Units are what a call consumed, in each dimension a rate card prices.
type Units struct {
	InputTokens  uint64 `cbor:"1,keyasint" json:"input_tokens"`
	OutputTokens uint64 `cbor:"2,keyasint" json:"output_tokens"`
	CachedTokens uint64 `cbor:"3,keyasint" json:"cached_tokens"`
	PixelSteps   uint64 `cbor:"4,keyasint" json:"pixel_steps"`
	AudioMs      uint64 `cbor:"5,keyasint" json:"audio_ms"`
	// ExpertTokens are the rows a MoE model's experts computed at other
	// holders for the call (one per token per expert the gate chose, per
	// layer). Omitted when zero, so the encoding of every dense call is
	// what it was before the field existed.
	ExpertTokens uint64 `cbor:"6,keyasint,omitempty" json:"expert_tokens,omitempty"`
}

// Breakdown is a priced call, in micro-units.
type Breakdown struct {
	InputTokens  uint64 `cbor:"1,keyasint" json:"input_tokens"`  // units × unit price
	OutputTokens uint64 `cbor:"2,keyasint" json:"output_tokens"` // units × unit price
	CachedTokens uint64 `cbor:"3,keyasint" json:"cached_tokens"` // units × unit price
	PixelSteps   uint64 `cbor:"4,keyasint" json:"pixel_steps"`   // units × unit price
	AudioMs      uint64 `cbor:"5,keyasint" json:"audio_ms"`      // units × unit price
	Usage        uint64 `cbor:"6,keyasint" json:"usage"`         // Σ of the six per-unit figures (UsageParts)
	Minimum      uint64 `cbor:"7,keyasint" json:"minimum"`       // the rate card's per-call minimum
	Base         uint64 `cbor:"8,keyasint" json:"base"`          // max(Minimum, Usage)
	Surcharge    uint64 `cbor:"9,keyasint" json:"surcharge"`     // of the verification level
	Total        uint64 `cbor:"10,keyasint" json:"total"`        // Base + Surcharge
	// ExpertTokens is units × unit price of remote expert-tokens; omitted
	// when zero (dense calls encode as before).
	ExpertTokens uint64 `cbor:"11,keyasint,omitempty" json:"expert_tokens,omitempty"`
}

// UsageParts returns the per-unit figures whose sum is Usage, in one
// order for every caller that checks it.
func (b Breakdown) UsageParts() []uint64 {
	return []uint64{b.InputTokens, b.OutputTokens, b.CachedTokens, b.PixelSteps, b.AudioMs, b.ExpertTokens}
}

// MinimumApplied reports whether the per-call minimum set the base price.
func (b Breakdown) MinimumApplied() bool { return b.Minimum > b.Usage }
