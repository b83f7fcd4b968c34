package llm

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/inference"
)

// Generate runs one generation, streaming tokens through emit.
func (e *Engine) Generate(ctx context.Context, req inference.GenerateRequest, emit func(inference.Token) error) (inference.Result, error) {
	res := inference.Result{StopToken: -1}
	sp := req.Sampling
	if err := checkSampling(sp); err != nil {
		return res, err
	}
	if req.LogProbs < 0 || req.LogProbs > MaxLogProbs {
		return res, fmt.Errorf("llm: logprobs %d outside 0..%d", req.LogProbs, MaxLogProbs)
	}
	prompt, err := e.EncodePrompt(req)
	if err != nil {
		return res, err
	}
	res.Prompt = prompt
	cont := req.Continuation
	if len(cont) == 0 && req.ContinuationText != "" {
		cont = e.m.Tok.encodePlain(req.ContinuationText, false)
	}
	for _, t := range cont {
		if t < 0 || t >= e.m.Cfg.Vocab {
			return res, fmt.Errorf("llm: continuation token %d outside the vocabulary of %d", t, e.m.Cfg.Vocab)
		}
	}
	all := append(append([]int(nil), prompt...), cont...)
	limit := e.opts.MaxContext
	if len(cont) > 0 && len(all) >= limit {
		res.FinishReason = inference.FinishLength
		return res, nil
	}
	if len(all) >= limit {
		return res, fmt.Errorf("llm: prompt of %d tokens leaves no room in the context of %d", len(all), limit)
	}
	maxTokens := sp.MaxTokens
	if maxTokens == 0 {
		maxTokens = limit
	}
	if len(cont) >= maxTokens {
		res.FinishReason = inference.FinishLength
		return res, nil
	}
	con, err := e.newConstraint(sp)
	if err != nil {
		return res, err
	}
	// Replay the continuation's text so held-back text and stop matching
	// resume exactly where the first run left them.
	ts := newTextStream(sp.Stop)
	for _, t := range cont {
		if con != nil {
			if err := con.accept(t); err != nil {
				return res, err
			}
		}
		if e.m.Tok.IsEOG(t) {
			res.FinishReason, res.StopToken = inference.FinishStop, t
			return res, nil
		}
		if _, stopped := ts.push(e.m.Tok.Piece(t)); stopped {
			res.FinishReason = inference.FinishStop
			return res, nil
		}
	}
	// The last prompt token is always computed: its logits start the
	// answer. Positions are computed the same way whatever the batch, so
	// a cached prefix gives the bits a cold run gives.
	seq, cached := e.sequence(req.CacheKey, all, len(all)-1, min(limit, len(all)+maxTokens-len(cont)))
	res.CachedTokens = cached
	fed := all
	defer func() { e.cache.put(req.CacheKey, fed, seq) }()
	logits, err := e.prefill(ctx, seq, all[cached:])
	if err != nil {
		return res, err
	}
	last := logits[len(logits)-1]
	text := make([]byte, 0, 256)
	for produced := len(cont); ; {
		pos := seq.Len()
		var id int
		if con == nil {
			id = Sample(last, sp, pos)
		} else {
			allowed, err := con.allowed(constraintBudget(sp, produced))
			if err != nil {
				return res, err
			}
			id, _ = sampleMasked(last, allowed, sp, pos, -1)
			if err := con.accept(id); err != nil {
				return res, err
			}
		}
		tok := inference.Token{ID: id, Pos: pos}
		if req.LogProbs > 0 {
			tok.TopK = TopLogProbs(last, req.LogProbs)
			tok.LogProb = TokenLogProb(last, id)
		}
		produced++
		res.Tokens = append(res.Tokens, id)
		if e.m.Tok.IsEOG(id) {
			// An end-of-turn token ends the text: release what was held back.
			tok.Text = ts.flush()
			res.FinishReason, res.StopToken = inference.FinishStop, id
		} else {
			out, stopped := ts.push(e.m.Tok.Piece(id))
			switch {
			case stopped:
				res.FinishReason = inference.FinishStop
			case produced >= maxTokens || pos+1 >= limit:
				out += ts.flush()
				res.FinishReason = inference.FinishLength
			}
			tok.Text = out
		}
		text = append(text, tok.Text...)
		tok.Last = res.FinishReason != ""
		if err := emit(tok); err != nil {
			return res, fmt.Errorf("llm: emit: %w", err)
		}
		if res.FinishReason != "" {
			break
		}
		l, err := seq.Forward(ctx, []int{id}, 0)
		if err != nil {
			return res, err
		}
		fed = append(fed, id)
		last = l[0]
	}
	res.Text = string(text)
	return res, nil
}
