package openai

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Request is a chat or text completion as the backend sees it.
type Request struct {
	Model    string
	Chat     bool
	Messages []inference.Message // chat
	Prompt   string              // text completion
	Sampling inference.Sampling
	// TopLogProbs > 0 asks for that many log-probs per output token.
	TopLogProbs int
	Stream      bool
	// Tenzro is the request's `tenzro` object (routing options), raw.
	Tenzro json.RawMessage
	// Header carries the request headers (X-Tenzro-*, Authorization).
	Header http.Header
	// Provider is OpenRouter's `provider` object, raw; Models the
	// fallbacks after Model; Params the request parameters (gossip.Param*)
	// the buyer set that the router cannot see in the rest (provider_prefs.go).
	Provider json.RawMessage
	Models   []string
	Params   []string
}

// Delta is one piece of streamed output.
type Delta struct {
	Text     string
	LogProbs []terms.TokenLogProbs
}

// Result is a finished completion.
type Result struct {
	// Model names what actually served the request.
	Model        string
	Text         string
	FinishReason string
	Usage        Usage
	LogProbs     []terms.TokenLogProbs
	// Tenzro is attached as the response's `tenzro` object (provider,
	// receipt, payment record); nil leaves it out.
	Tenzro any
}

// Backend answers completions. Complete calls onDelta for each piece of
// output in order (for streaming); the Result repeats the whole text. An
// *Error return chooses the HTTP status and error object.
type Backend interface {
	Models(ctx context.Context) []Model
	Complete(ctx context.Context, req *Request, onDelta func(Delta) error) (*Result, error)
}
