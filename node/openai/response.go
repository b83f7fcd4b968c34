package openai

import (
	"bytes"
	"encoding/json"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Response and chunk bodies, built as ordered structs so that field names
// and nulls match OpenAI's exactly.

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type logProbsContent struct {
	Content []terms.TokenLogProbs `json:"content"`
	Refusal *string               `json:"refusal"` // always null, as OpenAI sends it
}

type chatChoice struct {
	Index        int              `json:"index"`
	Message      chatMessage      `json:"message"`
	LogProbs     *logProbsContent `json:"logprobs"`
	FinishReason string           `json:"finish_reason"`
}

type textLogProbs struct {
	Tokens        []string    `json:"tokens"`
	TokenLogProbs []float32   `json:"token_logprobs"`
	TopLogProbs   []topByProb `json:"top_logprobs"`
	TextOffset    []int       `json:"text_offset"`
}

type textChoice struct {
	Index        int           `json:"index"`
	Text         string        `json:"text"`
	LogProbs     *textLogProbs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

type body struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices any    `json:"choices"`
	Usage   *Usage `json:"usage,omitempty"`
	Tenzro  any    `json:"tenzro,omitempty"`
}

func finalBody(req *Request, res *Result, id string, created int64) body {
	u := res.Usage
	b := body{ID: id, Created: created, Model: res.Model, Usage: &u, Tenzro: res.Tenzro}
	if req.Chat {
		b.Object = "chat.completion"
		if calls, ok := toolCallBody(req, res, id); ok {
			b.Choices = calls
			return b
		}
		c := chatChoice{Message: chatMessage{Role: "assistant", Content: res.Text}, FinishReason: res.FinishReason}
		if req.TopLogProbs > 0 {
			c.LogProbs = &logProbsContent{Content: res.LogProbs}
		}
		b.Choices = []chatChoice{c}
		return b
	}
	b.Object = "text_completion"
	fr := res.FinishReason
	c := textChoice{Text: res.Text, FinishReason: &fr}
	if req.TopLogProbs > 0 {
		c.LogProbs = textLogProbsOf(res.LogProbs)
	}
	b.Choices = []textChoice{c}
	return b
}

func textLogProbsOf(lps []terms.TokenLogProbs) *textLogProbs {
	out := &textLogProbs{Tokens: []string{}, TokenLogProbs: []float32{}, TopLogProbs: []topByProb{}, TextOffset: []int{}}
	off := 0
	for _, lp := range lps {
		out.Tokens = append(out.Tokens, lp.Token)
		out.TokenLogProbs = append(out.TokenLogProbs, lp.LogProb)
		out.TopLogProbs = append(out.TopLogProbs, topByProb(lp.Top))
		out.TextOffset = append(out.TextOffset, off)
		off += len(lp.Token)
	}
	return out
}

type chunkDelta struct {
	Role      string        `json:"role,omitempty"`
	Content   *string       `json:"content,omitempty"`
	ToolCalls []toolCallOut `json:"tool_calls,omitempty"`
}

type chatChunkChoice struct {
	Index        int              `json:"index"`
	Delta        chunkDelta       `json:"delta"`
	LogProbs     *logProbsContent `json:"logprobs"`
	FinishReason *string          `json:"finish_reason"`
}

// topByProb is a completions top_logprobs entry: a JSON object from token
// to log-prob whose keys come in the order given (most probable first, as
// OpenAI writes it), not sorted as a Go map would be. A token repeated in
// the list keeps its first (higher) log-prob.
type topByProb []terms.TopLogProb

func (t topByProb) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	seen := make(map[string]bool, len(t))
	for _, e := range t {
		if seen[e.Token] {
			continue
		}
		seen[e.Token] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.Token)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.LogProb)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
