package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ErrTruncated reports a stream that ended before the upstream said the
// answer was finished (no finish reason): it was cut off and the answer is
// incomplete. A stream that carried a finish reason is complete even if
// [DONE] never came: continuing it elsewhere would add text after the model
// stopped.
var ErrTruncated = errors.New("upstream: stream ended before the answer was complete")

// ErrEmptyAnswer reports a stream that finished without any text: an
// engine that answers 200 with nothing has failed, and an empty answer
// must neither be billed nor pass for a success.
var ErrEmptyAnswer = errors.New("upstream: the engine finished its answer without any text")

// maxEventSize bounds one SSE data line.
const maxEventSize = 1 << 20

// maxFinishReason bounds a finish reason ("stop", "length", …).
const maxFinishReason = 64

type chunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		LogProbs     json.RawMessage `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func readStream(br *bufio.Reader, r *Request, onDelta func(Delta) error) (*Result, error) {
	res := &Result{}
	var text strings.Builder
	pieces, usage := 0, false
	for {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) || err != nil && res.FinishReason != "" {
			break // once the answer is finished, only its usage can be lost
		}
		if err != nil {
			return nil, fmt.Errorf("upstream: read stream: %w", err)
		}
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue // comments, event names, blank separators
		}
		data := bytes.TrimSpace(line[len("data:"):])
		if string(data) == "[DONE]" {
			break
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("upstream: malformed chunk %.80q: %w", data, err)
		}
		if c.Error != nil {
			return nil, &StatusError{Status: 502, Code: "upstream_error", Message: c.Error.Message}
		}
		if c.Usage != nil {
			if c.Usage.PromptTokens < 0 || c.Usage.CompletionTokens < 0 {
				return nil, fmt.Errorf("upstream: malformed usage: %d prompt and %d completion tokens", c.Usage.PromptTokens, c.Usage.CompletionTokens)
			}
			usage = true
			res.PromptTokens, res.CompletionTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			d := Delta{Text: ch.Delta.Content + ch.Text}
			if r.TopLogProbs > 0 {
				lps, err := parseLogProbs(r.Chat, ch.LogProbs)
				if err != nil {
					return nil, err
				}
				if d.Text != "" && len(lps) == 0 {
					return nil, ErrNoLogProbs
				}
				d.LogProbs = lps
				res.LogProbs = append(res.LogProbs, lps...)
			}
			text.WriteString(d.Text)
			if d.Text != "" {
				pieces++
			}
			if d.Text != "" || len(d.LogProbs) > 0 {
				if err := onDelta(d); err != nil {
					return nil, err
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				if len(*ch.FinishReason) > maxFinishReason || !utf8.ValidString(*ch.FinishReason) {
					return nil, fmt.Errorf("upstream: malformed finish reason %.40q", *ch.FinishReason)
				}
				res.FinishReason = *ch.FinishReason
			}
		}
	}
	if res.FinishReason == "" {
		return nil, ErrTruncated
	}
	if text.Len() == 0 && r.Sampling.MaxTokens != 0 {
		return nil, ErrEmptyAnswer
	}
	if !usage {
		// An engine that ignores stream_options (or whose usage chunk was
		// lost) streams one token per chunk: count them rather than bill
		// an answer as empty.
		res.CompletionTokens = pieces
	}
	res.Text = text.String()
	return res, nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			return nil, err
		}
		buf = append(buf, part...)
		if len(buf) > maxEventSize {
			return nil, fmt.Errorf("event larger than %d bytes", maxEventSize)
		}
		if !isPrefix {
			return buf, nil
		}
	}
}

// parseLogProbs reads a choice's logprobs in the chat shape
// ({"content":[{token, logprob, top_logprobs:[...]}]}) or the completions
// shape ({"tokens":[...], "token_logprobs":[...], "top_logprobs":[{tok: lp}]}).
func parseLogProbs(chat bool, raw json.RawMessage) ([]TokenLogProb, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if chat {
		var lp struct {
			Content []TokenLogProb `json:"content"`
		}
		if err := json.Unmarshal(raw, &lp); err != nil {
			return nil, fmt.Errorf("upstream: malformed logprobs: %w", err)
		}
		return lp.Content, nil
	}
	var lp struct {
		Tokens        []string             `json:"tokens"`
		TokenLogProbs []float32            `json:"token_logprobs"`
		TopLogProbs   []map[string]float32 `json:"top_logprobs"`
	}
	if err := json.Unmarshal(raw, &lp); err != nil {
		return nil, fmt.Errorf("upstream: malformed logprobs: %w", err)
	}
	out := make([]TokenLogProb, len(lp.Tokens))
	for i, tok := range lp.Tokens {
		out[i].Token = tok
		if i < len(lp.TokenLogProbs) {
			out[i].LogProb = lp.TokenLogProbs[i]
		}
		if i < len(lp.TopLogProbs) {
			for t, v := range lp.TopLogProbs[i] {
				out[i].Top = append(out[i].Top, terms.TopLogProb{Token: t, LogProb: v})
			}
			// JSON objects are unordered: sort by descending log-prob,
			// then by token, so the same answer always relays the same way.
			sort.Slice(out[i].Top, func(a, b int) bool {
				ta, tb := out[i].Top[a], out[i].Top[b]
				if ta.LogProb != tb.LogProb {
					return ta.LogProb > tb.LogProb
				}
				return ta.Token < tb.Token
			})
		}
	}
	return out, nil
}
