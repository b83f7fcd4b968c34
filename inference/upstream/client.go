package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ErrNoLogProbs refuses a request that needs log-probs from an upstream
// that did not supply them.
var ErrNoLogProbs = errors.New("upstream: the upstream engine returned no log-probs; it cannot serve verifiable requests")

// ErrUnreachable marks a request that never reached the engine (refused,
// reset or timed out before any answer).
var ErrUnreachable = errors.New("upstream: engine unreachable")

// Config locates the upstream.
type Config struct {
	// BaseURL is the upstream's OpenAI base, e.g. http://127.0.0.1:8080/v1.
	BaseURL string
	// Model is the model name the upstream knows.
	Model string
	// APIKey, if set, is sent as a bearer token to the upstream.
	APIKey string
	// Timeout bounds one whole request (default 10 minutes).
	Timeout time.Duration
	// OnUnreachable, if set, is called (without blocking the request)
	// each time a request could not reach the engine at all, so the
	// caller can check the engine's health at once.
	OnUnreachable func()
}

// Validate checks the config.
func (c Config) Validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("upstream: base_url %q is not an http(s) URL", c.BaseURL)
	}
	if c.Model == "" {
		return errors.New("upstream: model must name the upstream's model")
	}
	return nil
}

// Client calls one upstream model.
type Client struct {
	cfg  Config
	http *http.Client
}

// New returns a client.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Client{cfg: cfg, http: &http.Client{Timeout: cfg.Timeout}}, nil
}

// Request is one completion for the upstream.
type Request struct {
	Chat     bool
	Messages []inference.Message
	Prompt   string
	Sampling inference.Sampling
	// TopLogProbs > 0 requires log-probs (top TopLogProbs per token).
	TopLogProbs int
	// Continuation is text another engine already produced for this
	// answer; the engine is asked to continue it (ContinueFinalMessage)
	// and streams only what comes after.
	Continuation string
}

// Continuation modes: how an engine is asked to continue text it did not
// write.
const (
	// ContinueAssistantPrefix sends the chat messages plus a final
	// assistant message holding the text so far, with vLLM's
	// continue_final_message and add_generation_prompt=false (llama.cpp's
	// server and Ollama continue a trailing assistant message as a
	// prefill). A text completion continues as prompt + text.
	ContinueAssistantPrefix = "assistant_prefix"
	// ContinueRawPrompt continues text completions only (prompt + text).
	ContinueRawPrompt = "raw_prompt"
	// ContinueNone refuses every continuation.
	ContinueNone = "none"
)

// CanContinue reports whether mode can continue a request of this kind.
func CanContinue(mode string, chat bool) bool {
	switch mode {
	case ContinueAssistantPrefix:
		return true
	case ContinueRawPrompt:
		return !chat
	}
	return false
}

// Delta is one streamed piece of output.
type Delta struct {
	Text     string
	LogProbs []TokenLogProb
}

// TokenLogProb is a token and its top alternatives, by token text (an
// upstream does not expose token IDs); its raw bytes are kept where the
// text cannot carry them.
type TokenLogProb = terms.TokenLogProbs

// Result is the finished completion.
type Result struct {
	Text             string
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	LogProbs         []TokenLogProb
}

// StatusError is an error the upstream answered with.
type StatusError struct {
	Status     int
	Type, Code string
	Message    string
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("upstream: HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

func (c *Client) body(r *Request) map[string]any {
	b := map[string]any{
		"model":          c.cfg.Model,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"temperature":    r.Sampling.Temperature,
		// OpenAI's seed is a signed 64-bit integer and engines refuse a
		// larger one (a gateway draws seeds from all 64 bits): the top bit
		// is dropped, the receipt keeps the seed as requested.
		"seed": int64(r.Sampling.Seed & math.MaxInt64),
	}
	if r.Sampling.TopP > 0 && r.Sampling.TopP < 1 {
		b["top_p"] = r.Sampling.TopP
	}
	if r.Sampling.TopK > 0 {
		b["top_k"] = r.Sampling.TopK
	}
	if r.Sampling.MaxTokens > 0 {
		b["max_tokens"] = r.Sampling.MaxTokens
	}
	if len(r.Sampling.Stop) > 0 {
		b["stop"] = r.Sampling.Stop
	}
	if r.Chat {
		b["messages"] = r.Messages
		if r.Continuation != "" {
			msgs := append(append([]inference.Message(nil), r.Messages...), inference.Message{Role: "assistant", Content: r.Continuation})
			b["messages"] = msgs
			b["continue_final_message"] = true
			b["add_generation_prompt"] = false
		}
		if r.TopLogProbs > 0 {
			b["logprobs"] = true
			b["top_logprobs"] = r.TopLogProbs
		}
	} else {
		b["prompt"] = r.Prompt + r.Continuation
		if r.TopLogProbs > 0 {
			b["logprobs"] = r.TopLogProbs
		}
	}
	return b
}

// Complete streams one completion from the upstream.
func (c *Client) Complete(ctx context.Context, r *Request, onDelta func(Delta) error) (*Result, error) {
	payload, err := json.Marshal(c.body(r))
	if err != nil {
		return nil, fmt.Errorf("upstream: encode request: %w", err)
	}
	path := "/completions"
	if r.Chat {
		path = "/chat/completions"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+path, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil && c.cfg.OnUnreachable != nil {
			c.cfg.OnUnreachable()
		}
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp)
	}
	return readStream(bufio.NewReaderSize(resp.Body, 64<<10), r, onDelta)
}

func statusError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &StatusError{Status: resp.StatusCode, Message: strings.TrimSpace(string(raw))}
	var body struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && body.Error.Message != "" {
		e.Message, e.Type = body.Error.Message, body.Error.Type
		if body.Error.Code != nil {
			e.Code = fmt.Sprint(body.Error.Code)
		}
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		} else if t, err := http.ParseTime(s); err == nil {
			e.RetryAfter = time.Until(t)
		}
	}
	return e
}
