package inference

import (
	"context"
	"encoding/hex"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ModelID identifies a model by the Merkle root of its files (see
// inference/catalog).
type ModelID [32]byte

// String returns the ID as lowercase hex.
func (id ModelID) String() string { return hex.EncodeToString(id[:]) }

// ModelInfo describes a loaded model.
type ModelInfo struct {
	Name          string  // general.name, or the directory name
	ID            ModelID // catalog Merkle root of the model directory
	Arch          string  // general.architecture, e.g. "llama"
	VocabSize     int
	ContextLength int    // the longest sequence the engine accepts (prompt + output)
	Quant         string // tensor type of the projection weights: "F32", "F16", "Q8_0" or "mixed"
	Params        int64  // number of weights
	Layers        int
	Experts       int // 0 for a dense model
	ExpertsUsed   int // experts chosen per token (top-k of the gate)
	Template      string
}

// Message is one chat message (defined with the receipts that commit to
// it).
type Message = terms.Message

// Sampling holds the sampling parameters of a request (defined with the
// receipts that commit to them).
type Sampling = terms.Sampling

// GenerateRequest is one generation.
type GenerateRequest struct {
	// Messages are rendered with the model's chat template (with the
	// assistant turn opened), tool calls and tool answers included; an
	// engine that reads text only joins text parts and refuses any other
	// part, naming it. If empty, Prompt is used as raw text.
	Messages []Message
	Prompt   string
	// PromptTokens, if set, is used as the prompt as-is (no template, no BOS).
	PromptTokens []int
	// Continuation holds output tokens already emitted for this request by a
	// previous run: they are prefilled after the prompt and generation
	// resumes at the next position. ContinuationText is tokenized and used
	// instead when Continuation is empty (exact only when the tokenizer
	// reproduces the emitted tokens from their text).
	Continuation     []int
	ContinuationText string
	Sampling         Sampling
	// LogProbs asks for the top LogProbs log-probs of every decode step.
	LogProbs int
	// CacheKey names the conversation for an engine's prefix cache (a
	// session ID): the sequence this generation leaves behind is kept
	// under it. An engine without a cache ignores it; results never
	// depend on it.
	CacheKey string
}

// LogProb is one entry of a top-k distribution.
type LogProb struct {
	ID      int     `json:"id"`
	LogProb float32 `json:"logprob"`
}

// Token is one generated token.
type Token struct {
	ID   int    // token ID
	Pos  int    // absolute position in the sequence (prompt tokens come first)
	Text string // text released with this token (see the package doc)
	TopK []LogProb
	// LogProb is ID's own log-probability (with GenerateRequest.LogProbs
	// > 0), whether or not it is among TopK: a sampled token can lie
	// outside the k most likely.
	LogProb float32
	// Last marks the answer's last token (an engine that cannot tell
	// leaves it false): a server may then send it with the final frame.
	Last bool
}

// Finish reasons.
const (
	FinishStop   = "stop"   // end-of-turn token or stop sequence
	FinishLength = "length" // MaxTokens or the context length
)

// Result summarises a finished generation.
type Result struct {
	Text   string
	Prompt []int // the prompt tokens the model saw
	// Tokens are the output tokens of this run (Continuation excluded), in
	// emission order, including a final end-of-turn token.
	Tokens       []int
	FinishReason string
	// StopToken is the end-of-turn token that ended the generation (also the
	// last of Tokens), or -1.
	StopToken int
	// CachedTokens is how many leading tokens of Prompt (and Continuation)
	// were not computed by this run because an engine's prefix cache held
	// their state: the receipt's units claim them as cached_tokens and
	// the rest of the prompt as input_tokens.
	CachedTokens int
}

// Engine runs one model.
type Engine interface {
	Info() ModelInfo
	// Generate streams tokens through emit; an error from emit aborts.
	Generate(ctx context.Context, req GenerateRequest, emit func(Token) error) (Result, error)
	// Score prefills prompt+output once and returns the top-k log-probs of
	// the distribution that predicted each output token.
	Score(ctx context.Context, prompt, output []int, k int) ([][]LogProb, error)
	// EncodePrompt returns the prompt tokens Generate would use for req.
	EncodePrompt(req GenerateRequest) ([]int, error)
	Tokenize(text string) ([]int, error)
	Detokenize(ids []int) string
}

// Resampler is implemented by engines whose sampler is a pure function of
// the logits, the sampling terms and the token's position (the embedded
// engine). Resample is Score that also returns, for each output token,
// the token the sampler draws from the recomputed distribution at that
// token's position: a committee compares it with the token the provider
// signed, which logit commitments alone cannot check (another sampling
// seed, a token appended or cut short).
type Resampler interface {
	Resample(ctx context.Context, prompt, output []int, k int, sp Sampling) ([][]LogProb, []int, error)
}

// Prefiller is implemented by engines with a prefix cache (the embedded
// engine). Prefill computes the state of tokens and keeps it under key, so
// a later Generate whose prompt starts with them does not recompute them.
// It blocks until the state is kept; callers run it in the background.
type Prefiller interface {
	Prefill(ctx context.Context, key string, tokens []int) error
}
