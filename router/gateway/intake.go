package gateway

import (
	"fmt"
	"math"
	"net/http"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Validate checks a request against every limit the infer protocol
// enforces, before it is quoted or routed: a request no provider may take
// is the buyer's fault, answered 400 naming the field (Error.Param), and
// never reaches a provider to count against it.
func Validate(req *Request) error {
	bad := func(param, format string, args ...any) error {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Param: param, Message: fmt.Sprintf(format, args...)}
	}
	if req.Model == "" {
		return bad("model", "model is required")
	}
	if len(req.Model) > maxModelLen || !utf8.ValidString(req.Model) {
		return bad("model", "model must be at most %d bytes of UTF-8", maxModelLen)
	}
	text := len(req.Prompt)
	if req.Chat {
		if len(req.Messages) == 0 {
			return bad("messages", "messages must not be empty")
		}
		if len(req.Messages) > infer.MaxMessages {
			return bad("messages", "%d messages, limit %d", len(req.Messages), infer.MaxMessages)
		}
		for i, m := range req.Messages {
			if err := m.Check(); err != nil {
				return bad(fmt.Sprintf("messages[%d].%s", i, terms.FieldOf(err)), "%v", err)
			}
			text += m.Size()
		}
	} else if !utf8.ValidString(req.Prompt) {
		return bad("prompt", "prompt is not valid UTF-8")
	}
	s := req.Sampling
	switch {
	case math.IsNaN(s.Temperature) || s.Temperature < 0 || s.Temperature > infer.MaxTemperature:
		return bad("temperature", "temperature %v outside 0..%d", s.Temperature, infer.MaxTemperature)
	case math.IsNaN(s.TopP) || s.TopP < 0 || s.TopP > 1:
		return bad("top_p", "top_p %v outside 0..1", s.TopP)
	case s.TopK < 0 || s.TopK > infer.MaxTopK:
		return bad("top_k", "top_k %d outside 0..%d", s.TopK, infer.MaxTopK)
	case s.MaxTokens < 0 || s.MaxTokens > infer.MaxMaxTokens:
		return bad("max_tokens", "max_tokens %d outside 1..%d", s.MaxTokens, infer.MaxMaxTokens)
	case len(s.Stop) > infer.MaxStops:
		return bad("stop", "%d stop sequences, limit %d", len(s.Stop), infer.MaxStops)
	case req.TopLogProbs < 0 || req.TopLogProbs > infer.MaxTopLogProbs:
		return bad("top_logprobs", "top_logprobs %d outside 0..%d", req.TopLogProbs, infer.MaxTopLogProbs)
	}
	for i, st := range s.Stop {
		if st == "" || !utf8.ValidString(st) {
			return bad(fmt.Sprintf("stop[%d]", i), "stop sequences must be non-empty UTF-8")
		}
		text += len(st)
	}
	if err := validSession(req.Session); err != nil {
		return err
	}
	if text > infer.MaxTextBytes {
		param := "prompt"
		if req.Chat {
			param = "messages"
		}
		return bad(param, "%d bytes of text, limit %d", text, infer.MaxTextBytes)
	}
	// The protocol's own check, on the request as it would be sent, so a
	// limit added there is never missed here.
	probe := &infer.Request{Nonce: make([]byte, infer.NonceSize), ModelID: make([]byte, infer.ModelIDSize), Chat: req.Chat,
		Messages: req.Messages, Prompt: req.Prompt, Sampling: req.Sampling, TopLogProbs: req.TopLogProbs,
		Stream: req.Stream, Verification: req.Verification}
	if err := probe.Validate(); err != nil {
		return bad("", "%v", err)
	}
	return checkRouting(req)
}

// maxModelLen bounds the model field: a name or a 64-digit hex ID.
const maxModelLen = 256
