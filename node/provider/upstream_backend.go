package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/upstream"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/p2p/infer"
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
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return upstreamStatus(err)
}

// upstreamStatus is the OpenAI error of an upstream failure, whatever the
// context: never nil, so a caller that already read its context may
// dereference it.
func upstreamStatus(err error) *openai.Error {
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

// relayUpstream serves a forwarded request from the upstream engine.
func (s *inferServer) relayUpstream(ctx context.Context, up *upstream.Client, req *infer.Request, offer gossip.ModelOffer, send func(*infer.TokenFrame) error) (*infer.FinalFrame, error) {
	ur := &upstream.Request{Chat: req.Chat, Messages: req.Messages, Prompt: req.Prompt, Sampling: req.Sampling, TopLogProbs: req.TopLogProbs,
		Continuation: req.Continuation}
	if req.Verification == terms.VerifyOptimistic {
		ur.TopLogProbs = max(ur.TopLogProbs, commitTopK)
	}
	var sent strings.Builder
	var delivered int // content pieces written
	res, err := up.Complete(ctx, ur, func(d upstream.Delta) error {
		text := inference.ValidText(d.Text)
		tf := &infer.TokenFrame{Text: text}
		if req.TopLogProbs > 0 {
			tf.LogProbs = relayWireLogProbs(d.LogProbs, req.TopLogProbs)
		}
		if err := send(tf); err != nil {
			return err
		}
		sent.WriteString(text)
		if text != "" {
			delivered++
		}
		return nil
	})
	if err != nil && infer.Stopped(ctx) {
		// The buyer left. An upstream reports usage only at the end, so
		// the receipt claims one output token per piece delivered and no
		// input: the gateway bills its own counts where it holds the
		// tokenizer, and never more than crossed the wire.
		res, err = &upstream.Result{Text: sent.String(), FinishReason: FinishStopped, CompletionTokens: delivered}, nil
	}
	if err != nil {
		return nil, relayFailure(ctx, req, err)
	}
	env, err := s.sign(req, offer, sent.String(), res.PromptTokens, 0, res.CompletionTokens, nil, res.FinishReason, nil, false)
	if err != nil {
		return nil, errFrame(http.StatusInternalServerError, terms.CodeReceiptFailed, "%v", err)
	}
	return &infer.FinalFrame{FinishReason: res.FinishReason, PromptTokens: res.PromptTokens, CompletionTokens: res.CompletionTokens,
		Model: offer.Name, Receipt: env}, nil
}

// relayFailure is the answer to a relayed request the upstream failed.
// The context is read once: read again, it could end in between and turn
// the upstream's failure into a context error that is no *openai.Error
// (the nil dereference that would crash the provider).
func relayFailure(ctx context.Context, req *infer.Request, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var se *upstream.StatusError
	if req.Continuation != "" && errors.As(err, &se) && (se.Status == http.StatusBadRequest || se.Status == http.StatusUnprocessableEntity) {
		// The engine will not prefill another's text: the gateway then
		// restarts the answer instead of continuing it.
		return errFrame(http.StatusBadRequest, terms.CodeContinuationUnsupported, "the upstream engine refused to continue the text: %s", se.Message)
	}
	oe := upstreamStatus(err)
	e := errFrame(oe.Status, oe.Code, "%s", oe.Message)
	e.RetryAfterMs = int64(oe.RetryAfter) * 1000
	return e
}
