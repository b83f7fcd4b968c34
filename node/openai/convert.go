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

func sampling(temp, topP *float64, topK *int, seed *int64, maxTokens *int, stop StopList) (inference.Sampling, *Error) {
	s := inference.Sampling{Temperature: 1, TopP: 1}
	if temp != nil {
		if *temp < 0 || *temp > 2 {
			return s, BadRequest("temperature", "temperature must be between 0 and 2, got %v", *temp)
		}
		s.Temperature = *temp
	}
	if topP != nil {
		if *topP <= 0 || *topP > 1 {
			return s, BadRequest("top_p", "top_p must be in (0, 1], got %v", *topP)
		}
		s.TopP = *topP
	}
	if topK != nil {
		if *topK < 0 {
			return s, BadRequest("top_k", "top_k must not be negative")
		}
		s.TopK = *topK
	}
	if seed != nil {
		s.Seed = uint64(*seed)
	} else {
		s.Seed = randomSeed()
	}
	if maxTokens != nil {
		if *maxTokens < 1 {
			return s, BadRequest("max_tokens", "max_tokens must be at least 1, got %d", *maxTokens)
		}
		s.MaxTokens = *maxTokens
	}
	if len(stop) > maxStops {
		return s, BadRequest("stop", "at most %d stop sequences", maxStops)
	}
	for _, st := range stop {
		if st == "" {
			return s, BadRequest("stop", "stop sequences must not be empty")
		}
	}
	s.Stop = stop
	return s, nil
}

func checkCommon(model string, n *int) *Error {
	if model == "" {
		return BadRequest("model", "model is required")
	}
	if n != nil && *n != 1 {
		return BadRequest("n", "only n=1 is supported")
	}
	return nil
}

func chatToRequest(cr *ChatRequest) (*Request, *Error) {
	if e := checkCommon(cr.Model, cr.N); e != nil {
		return nil, e
	}
	if len(cr.Messages) == 0 {
		return nil, BadRequest("messages", "messages must not be empty")
	}
	for i, m := range cr.Messages {
		switch m.Role {
		case "system", "user", "assistant", "developer":
		default:
			return nil, BadRequest("messages", "messages[%d].role %q is not system, developer, user or assistant", i, m.Role)
		}
	}
	maxTok := cr.MaxCompletionTokens
	if maxTok == nil {
		maxTok = cr.MaxTokens
	}
	s, e := sampling(cr.Temperature, cr.TopP, cr.TopK, cr.Seed, maxTok, cr.Stop)
	if e != nil {
		return nil, e
	}
	req := &Request{Model: cr.Model, Chat: true, Messages: cr.Messages, Sampling: s, Stream: cr.Stream, Tenzro: cr.Tenzro}
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

func completionToRequest(cr *CompletionRequest) (*Request, *Error) {
	if e := checkCommon(cr.Model, cr.N); e != nil {
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
	s, e := sampling(cr.Temperature, cr.TopP, cr.TopK, cr.Seed, maxTok, cr.Stop)
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
