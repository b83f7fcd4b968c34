package provider

import (
	"context"
	"errors"
	"net/http"

	"github.com/tenzrod/tenzrod/inference/upstream"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// commitTopK is how many log-probs per step a logit commitment covers.
const commitTopK = 4

// completeUpstream serves a request through the upstream engine. A request
// whose verification level needs commitments asks the upstream for
// log-probs and is refused if the upstream does not return them.
func completeUpstream(ctx context.Context, up *upstream.Client, name string, req *openai.Request, opts openai.Options, onDelta func(openai.Delta) error) (*openai.Result, error) {
	ur := &upstream.Request{Chat: req.Chat, Messages: req.Messages, Prompt: req.Prompt, Sampling: req.Sampling, TopLogProbs: req.TopLogProbs}
	if opts.NeedsCommitments() {
		ur.TopLogProbs = max(ur.TopLogProbs, commitTopK)
	}
	res, err := up.Complete(ctx, ur, func(d upstream.Delta) error {
		od := openai.Delta{Text: d.Text}
		if req.TopLogProbs > 0 {
			od.LogProbs = d.LogProbs
		}
		return onDelta(od)
	})
	if err != nil {
		return nil, upstreamError(ctx, err)
	}
	out := &openai.Result{Model: name, Text: res.Text, FinishReason: res.FinishReason,
		Usage: openai.Usage{PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens, TotalTokens: res.PromptTokens + res.CompletionTokens}}
	if req.TopLogProbs > 0 {
		out.LogProbs = res.LogProbs
	}
	return out, nil
}

// upstreamError keeps the upstream's status and reason, so a 400 such as a
// context-length refusal reaches the buyer (and the router) as a 400.
func upstreamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var se *upstream.StatusError
	switch {
	case errors.As(err, &se):
		typ := se.Type
		if typ == "" {
			typ = "upstream_error"
		}
		return &openai.Error{Status: se.Status, Type: typ, Code: se.Code, Message: se.Message, RetryAfter: int(se.RetryAfter.Seconds())}
	case errors.Is(err, upstream.ErrEmptyAnswer):
		return &openai.Error{Status: http.StatusBadGateway, Type: "server_error", Code: "upstream_empty", Message: err.Error()}
	case errors.Is(err, upstream.ErrUnreachable):
		return &openai.Error{Status: http.StatusBadGateway, Type: "server_error", Code: "upstream_unreachable", Message: err.Error()}
	case errors.Is(err, upstream.ErrNoLogProbs):
		return &openai.Error{Status: http.StatusUnprocessableEntity, Type: "invalid_request_error", Code: terms.CodeLogProbsUnavailable, Message: err.Error()}
	default:
		return &openai.Error{Status: http.StatusBadGateway, Type: "server_error", Code: "upstream_failed", Message: err.Error()}
	}
}
