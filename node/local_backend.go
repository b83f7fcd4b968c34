package node

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/node/openai"
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
	// Capacity: refuse rather than queue without bound; the router retries
	// elsewhere or after Retry-After.
	select {
	case b.set.slots <- struct{}{}:
	default:
		return nil, &openai.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "capacity",
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
	var lps []openai.TokenLogProbs
	res, err := eng.Generate(ctx, gr, func(t inference.Token) error {
		d := openai.Delta{Text: t.Text}
		if req.TopLogProbs > 0 && len(t.TopK) > 0 {
			lp := tokenLogProbs(eng, t)
			lps = append(lps, lp)
			d.LogProbs = []openai.TokenLogProbs{lp}
		}
		return onDelta(d)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, openai.BadRequest("", "%v", err)
	}
	return &openai.Result{
		Model: o.Name, Text: res.Text, FinishReason: res.FinishReason, LogProbs: lps,
		Usage: openai.Usage{PromptTokens: len(res.Prompt), CompletionTokens: len(res.Tokens), TotalTokens: len(res.Prompt) + len(res.Tokens)},
	}, nil
}

func tokenLogProbs(eng inference.Engine, t inference.Token) openai.TokenLogProbs {
	text := eng.Detokenize([]int{t.ID})
	lp := openai.TokenLogProbs{Token: text, Bytes: bytesOf(text), LogProb: t.LogProb}
	for _, alt := range t.TopK {
		at := eng.Detokenize([]int{alt.ID})
		lp.Top = append(lp.Top, openai.TopLogProb{Token: at, LogProb: alt.LogProb, Bytes: bytesOf(at)})
	}
	return lp
}

func bytesOf(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}
