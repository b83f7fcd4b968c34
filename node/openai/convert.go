package openai

import (
	"encoding/json"

	"github.com/tenzrod/tenzrod/inference"
)

// Limits on request parameters, as OpenAI documents them.
const (
	maxStops        = 4
	maxTopLogProbs  = 20
	maxCompLogProbs = 5
	defaultCompMax  = 16 // OpenAI's default max_tokens for /v1/completions
)

// generationRequest is the body of either generation endpoint.
type generationRequest interface {
	toRequest() (*Request, *Error)
	common() *GenerationParams
}

func (p *GenerationParams) common() *GenerationParams { return p }

// includeUsage reports whether a stream ends with a usage chunk.
func (p *GenerationParams) includeUsage() bool {
	return p.StreamOptions != nil && p.StreamOptions.IncludeUsage
}

// sampling checks the shared sampling fields; maxTokens is the endpoint's
// own choice of max_tokens (or its default).
func (p *GenerationParams) sampling(maxTokens *int) (inference.Sampling, *Error) {
	s := inference.Sampling{Temperature: 1, TopP: 1}
	if p.Temperature != nil {
		if *p.Temperature < 0 || *p.Temperature > 2 {
			return s, BadRequest("temperature", "temperature must be between 0 and 2, got %v", *p.Temperature)
		}
		s.Temperature = *p.Temperature
	}
	if p.TopP != nil {
		if *p.TopP <= 0 || *p.TopP > 1 {
			return s, BadRequest("top_p", "top_p must be in (0, 1], got %v", *p.TopP)
		}
		s.TopP = *p.TopP
	}
	if p.TopK != nil {
		if *p.TopK < 0 {
			return s, BadRequest("top_k", "top_k must not be negative")
		}
		s.TopK = *p.TopK
	}
	if p.Seed != nil {
		s.Seed = uint64(*p.Seed)
	} else {
		s.Seed = randomSeed()
	}
	if maxTokens != nil {
		if *maxTokens < 1 {
			return s, BadRequest("max_tokens", "max_tokens must be at least 1, got %d", *maxTokens)
		}
		s.MaxTokens = *maxTokens
	}
	if len(p.Stop) > maxStops {
		return s, BadRequest("stop", "at most %d stop sequences", maxStops)
	}
	for _, st := range p.Stop {
		if st == "" {
			return s, BadRequest("stop", "stop sequences must not be empty")
		}
	}
	s.Stop = p.Stop
	return s, nil
}

// check refuses a request naming no model or asking for more than one
// choice.
func (p *GenerationParams) check() *Error {
	if p.Model == "" {
		return BadRequest("model", "model is required")
	}
	if p.N != nil && *p.N != 1 {
		return BadRequest("n", "only n=1 is supported")
	}
	return nil
}

func (cr *ChatRequest) toRequest() (*Request, *Error) {
	if e := cr.check(); e != nil {
		return nil, e
	}
	if len(cr.Messages) == 0 {
		return nil, BadRequest("messages", "messages must not be empty")
	}
	msgs, e := parseMessages(cr.Messages)
	if e != nil {
		return nil, e
	}
	maxTok := cr.MaxCompletionTokens
	if maxTok == nil {
		maxTok = cr.MaxTokens
	}
	s, e := cr.sampling(maxTok)
	if e != nil {
		return nil, e
	}
	if e := cr.applyTools(&s); e != nil {
		return nil, e
	}
	req := &Request{Model: cr.Model, Chat: true, Messages: msgs, Sampling: s, Stream: cr.Stream, Tenzro: cr.Tenzro}
	if cr.LogProbs {
		req.TopLogProbs = 1
		if cr.TopLogProbs != nil {
			if *cr.TopLogProbs < 0 || *cr.TopLogProbs > maxTopLogProbs {
				return nil, BadRequest("top_logprobs", "top_logprobs must be 0..%d", maxTopLogProbs)
			}
			req.TopLogProbs = max(*cr.TopLogProbs, 1)
		}
	} else if cr.TopLogProbs != nil {
		return nil, BadRequest("top_logprobs", "top_logprobs requires logprobs: true")
	}
	return req, nil
}

func (cr *CompletionRequest) toRequest() (*Request, *Error) {
	if e := cr.check(); e != nil {
		return nil, e
	}
	prompt, e := parsePrompt(cr.Prompt)
	if e != nil {
		return nil, e
	}
	if cr.Echo {
		return nil, BadRequest("echo", "echo is not supported")
	}
	maxTok := cr.MaxTokens
	if maxTok == nil {
		d := defaultCompMax
		maxTok = &d
	}
	s, e := cr.sampling(maxTok)
	if e != nil {
		return nil, e
	}
	req := &Request{Model: cr.Model, Prompt: prompt, Sampling: s, Stream: cr.Stream, Tenzro: cr.Tenzro}
	if cr.LogProbs != nil {
		if *cr.LogProbs < 0 || *cr.LogProbs > maxCompLogProbs {
			return nil, BadRequest("logprobs", "logprobs must be 0..%d", maxCompLogProbs)
		}
		req.TopLogProbs = *cr.LogProbs
	}
	return req, nil
}

// parsePrompt accepts a string or an array holding exactly one string.
func parsePrompt(raw json.RawMessage) (string, *Error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", BadRequest("prompt", "prompt is required")
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return "", BadRequest("prompt", "prompt must be a string or an array of one string (token arrays are not supported)")
	}
	if len(many) != 1 {
		return "", BadRequest("prompt", "batched prompts are not supported (got %d)", len(many))
	}
	return many[0], nil
}
