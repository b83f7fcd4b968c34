package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// GenerationParams are the request fields /v1/chat/completions and
// /v1/completions share, decoded and checked the same way for both.
type GenerationParams struct {
	Model         string          `json:"model"`
	Stream        bool            `json:"stream"`
	StreamOptions *StreamOptions  `json:"stream_options,omitempty"`
	MaxTokens     *int            `json:"max_tokens,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	TopK          *int            `json:"top_k,omitempty"`
	Seed          *int64          `json:"seed,omitempty"`
	Stop          StopList        `json:"stop,omitempty"`
	N             *int            `json:"n,omitempty"`
	Tenzro        json.RawMessage `json:"tenzro,omitempty"`
	// Provider and Models are OpenRouter's provider preferences and
	// fallback models (provider_prefs.go).
	Provider json.RawMessage `json:"provider,omitempty"`
	Models   []string        `json:"models,omitempty"`
}

// ChatRequest is the body of POST /v1/chat/completions. Fields OpenAI
// defines that tenzrod does not use are accepted and ignored, as OpenAI
// clients send many of them by default; those that would change the
// answer are read: tools and response_format into the sampling terms
// (tools.go).
type ChatRequest struct {
	GenerationParams
	// Messages are parsed one by one (terms.ParseMessage), so that an
	// error names the message and field.
	Messages            []json.RawMessage `json:"messages"`
	MaxCompletionTokens *int              `json:"max_completion_tokens,omitempty"`
	LogProbs            bool              `json:"logprobs,omitempty"`
	TopLogProbs         *int              `json:"top_logprobs,omitempty"`
	toolFields
}

// CompletionRequest is the body of POST /v1/completions.
type CompletionRequest struct {
	GenerationParams
	Prompt   json.RawMessage `json:"prompt"`
	LogProbs *int            `json:"logprobs,omitempty"`
	Echo     bool            `json:"echo,omitempty"`
}

// StreamOptions are the stream_options object.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// StopList accepts OpenAI's "stop": a string or an array of strings.
type StopList []string

// UnmarshalJSON accepts a string, an array of strings or null.
func (s *StopList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = nil
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = StopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// Usage is OpenAI's usage object.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails, when set, says how much of the prompt was
	// served from cache (a session's reused history).
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails is OpenAI's usage.prompt_tokens_details.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Model is one entry of GET /v1/models.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// Error is an API error: the HTTP status and OpenAI's error object.
type Error struct {
	Status  int    `json:"-"`
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param,omitempty"`
	Code    string `json:"code,omitempty"`
	// RetryAfter, when set, is sent as the Retry-After header (seconds).
	RetryAfter int `json:"-"`
	// Tenzro, when set, is sent beside the error as the body's `tenzro`.
	Tenzro *ErrorInfo `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("openai: %d %s: %s", e.Status, e.Type, e.Message) }

// BadRequest is an invalid_request_error (400) about param.
func BadRequest(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: fmt.Sprintf(format, args...)}
}

// NotFound is a 404 for an unknown model.
func NotFound(model string) *Error {
	return &Error{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist or no provider serves it", model)}
}

// Unavailable is a 503: nothing can serve the request right now.
func Unavailable(format string, args ...any) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "unavailable", Message: fmt.Sprintf(format, args...)}
}
