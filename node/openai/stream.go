package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// sse writes server-sent events and flushes each one.
type sse struct {
	w       http.ResponseWriter
	flusher http.Flusher
	started bool
}

func (s *sse) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

func (s *sse) event(v any) error {
	s.start()
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("openai: encode event: %w", err)
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return err
	}
	if s.flusher != nil {
		s.flusher.Flush()
	}
	return nil
}

func (s *sse) done() {
	s.start()
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	if s.flusher != nil {
		s.flusher.Flush()
	}
}

// stream serves a streamed completion. Headers are sent with the first
// event, so an error before any output still gets a proper HTTP status;
// after that, an error becomes an explicit error event and no [DONE].
func (h *Handler) stream(w http.ResponseWriter, ctx context.Context, req *Request, id string, created int64, includeUsage bool) {
	fl, _ := w.(http.Flusher)
	s := &sse{w: w, flusher: fl}
	object := "text_completion"
	if req.Chat {
		object = "chat.completion.chunk"
	}
	model := req.Model
	chunk := func(choices any, usage *Usage, tenzro any) body {
		return body{ID: id, Object: object, Created: created, Model: model, Choices: choices, Usage: usage, Tenzro: tenzro}
	}
	sentRole := false
	var calls *callStream
	if req.Chat && forcedCall(req.Sampling) {
		calls = &callStream{id: id}
	}
	onDelta := func(d Delta) error {
		if d.Text == "" && len(d.LogProbs) == 0 {
			return nil
		}
		if req.Chat {
			if !sentRole {
				sentRole = true
				empty := ""
				if err := s.event(chunk([]chatChunkChoice{{Delta: chunkDelta{Role: "assistant", Content: &empty}}}, nil, nil)); err != nil {
					return err
				}
			}
			text := d.Text
			c := chatChunkChoice{Delta: chunkDelta{Content: &text}}
			if calls != nil {
				c.Delta = chunkDelta{ToolCalls: calls.push(text)}
				if c.Delta.ToolCalls == nil && len(d.LogProbs) == 0 {
					return nil
				}
			}
			if req.TopLogProbs > 0 {
				c.LogProbs = &logProbsContent{Content: d.LogProbs}
			}
			return s.event(chunk([]chatChunkChoice{c}, nil, nil))
		}
		c := textChoice{Text: d.Text}
		if req.TopLogProbs > 0 {
			c.LogProbs = textLogProbsOf(d.LogProbs)
		}
		return s.event(chunk([]textChoice{c}, nil, nil))
	}
	res, err := h.backend.Complete(ctx, req, onDelta)
	if err != nil {
		e := asError(err)
		if !s.started {
			writeError(w, e)
			return
		}
		_ = s.event(map[string]any{"error": e})
		return
	}
	model = res.Model
	fr := res.FinishReason
	if calls != nil && calls.started && fr == "stop" {
		fr = finishToolCalls
	}
	if req.Chat {
		if !sentRole {
			empty := ""
			_ = s.event(chunk([]chatChunkChoice{{Delta: chunkDelta{Role: "assistant", Content: &empty}}}, nil, nil))
		}
		_ = s.event(chunk([]chatChunkChoice{{FinishReason: &fr}}, nil, res.Tenzro))
	} else {
		_ = s.event(chunk([]textChoice{{FinishReason: &fr}}, nil, res.Tenzro))
	}
	if includeUsage {
		u := res.Usage
		_ = s.event(chunk([]any{}, &u, res.Tenzro))
	}
	s.done()
}
