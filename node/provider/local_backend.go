package provider

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// localBackend serves OpenAI requests from the provider's own engines.
type localBackend struct{ set *modelSet }

func (b localBackend) Models(context.Context) []openai.Model {
	var out []openai.Model
	for _, m := range b.set.models {
		o, st, _ := m.snapshot()
		if st == gossip.StateWarm && !isZero(o.ModelID) {
			out = append(out, openai.Model{ID: o.Name, Object: "model", OwnedBy: "tenzro:" + hex.EncodeToString(o.ModelID[:8])})
		}
	}
	return out
}

func (b localBackend) Complete(ctx context.Context, req *openai.Request, onDelta func(openai.Delta) error) (*openai.Result, error) {
	m := b.set.find(req.Model)
	if m == nil {
		return nil, openai.NotFound(req.Model)
	}
	opts, oerr := openai.ParseOptions(req.Tenzro, req.Header)
	if oerr != nil {
		return nil, oerr
	}
	o, st, eng := m.snapshot()
	up := m.upstream()
	if eng == nil && up == nil {
		return nil, &openai.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "model_" + string(st),
			Message: fmt.Sprintf("model %q is %s here", o.Name, st), RetryAfter: 1}
	}
	if down, why := m.upstreamDown(); down {
		return nil, &openai.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "model_" + string(st),
			Message: fmt.Sprintf("model %q is %s here: its upstream engine does not answer: %v", o.Name, st, why), RetryAfter: 1}
	}
	if up != nil && opts.NeedsCommitments() {
		// Never an answer at a lower level than asked, unlabelled.
		return nil, &openai.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: terms.CodeCommitmentsUnavailable,
			Message: fmt.Sprintf("model %q runs on an upstream engine, which cannot produce logit commitments (verification %q)", o.Name, opts.Verification)}
	}
	// Capacity: refuse rather than queue without bound; the router retries
	// elsewhere or after Retry-After.
	select {
	case b.set.slots <- struct{}{}:
	default:
		return nil, &openai.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: terms.CodeCapacity,
			Message: fmt.Sprintf("all %d slots busy", cap(b.set.slots)), RetryAfter: 1}
	}
	b.set.inFlight.Add(1)
	defer func() { <-b.set.slots; b.set.inFlight.Add(-1) }()
	if up != nil {
		return completeUpstream(ctx, up, o.Name, req, opts, onDelta)
	}

	gr := inference.GenerateRequest{Sampling: req.Sampling, LogProbs: req.TopLogProbs}
	if req.Chat {
		gr.Messages = req.Messages
	} else {
		gr.Prompt = req.Prompt
	}
	var lps []terms.TokenLogProbs
	gctx, call := startCall(ctx, eng)
	res, err := eng.Generate(gctx, gr, func(t inference.Token) error {
		d := openai.Delta{Text: t.Text}
		if req.TopLogProbs > 0 && len(t.TopK) > 0 {
			lp := tokenLogProbs(eng, t)
			lps = append(lps, lp)
			d.LogProbs = []terms.TokenLogProbs{lp}
		}
		return onDelta(d)
	})
	experts := call.finish(ctx, err == nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, expert.ErrNoHolder) {
			return nil, &openai.Error{Status: http.StatusServiceUnavailable, Type: "server_error", Code: terms.CodeExpertsUnavailable,
				Message: err.Error(), RetryAfter: int(expertsRetryAfter / time.Second)}
		}
		return nil, openai.BadRequest("", "%v", err)
	}
	out := &openai.Result{
		Model: o.Name, Text: res.Text, FinishReason: res.FinishReason, LogProbs: lps,
		Usage: openai.Usage{PromptTokens: len(res.Prompt), CompletionTokens: len(res.Tokens), TotalTokens: len(res.Prompt) + len(res.Tokens)},
	}
	if call != nil {
		out.Tenzro = localTenzro{Experts: append([]infer.ExpertUse{}, experts...)}
	}
	return out, nil
}

// localTenzro is the `tenzro` object of an answer served here directly:
// only what the provider itself knows (no gateway billed it).
type localTenzro struct {
	// Experts is each holder's part of a call of a model whose experts
	// run at holders: what it computed and what was signed to it.
	Experts []infer.ExpertUse `json:"experts"`
}

// tokenLogProbs renders one token's distribution as the routes show it:
// valid text, with the raw bytes beside it where they differ.
func tokenLogProbs(eng inference.Engine, t inference.Token) terms.TokenLogProbs {
	tok, raw := pieceText(eng, t.ID)
	lp := terms.TokenLogProbs{Token: tok, Bytes: raw, LogProb: t.LogProb}
	for _, alt := range t.TopK {
		at, araw := pieceText(eng, alt.ID)
		lp.Top = append(lp.Top, terms.TopLogProb{Token: at, LogProb: alt.LogProb, Bytes: araw})
	}
	return lp
}
