package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/inference"
)

// tenzroObject is the part of a response's `tenzro` object the history keeps.
type tenzroObject struct {
	Provider struct {
		PeerID    string `json:"peer_id"`
		MachineID string `json:"machine_id"`
	} `json:"provider"`
	Receipt *struct {
		Verified bool `json:"verified"`
		Receipt  *struct {
			Nonce string `json:"nonce"`
		} `json:"receipt"`
	} `json:"receipt"`
	Payment *struct {
		Signed *devproc.SignedRecord `json:"signed"`
	} `json:"payment"`
	Attempts  int          `json:"attempts"`
	Continued bool         `json:"continued"`
	Session   *sessionInfo `json:"session,omitempty"`
}

// sessionInfo is what a session turn's response says of its session.
type sessionInfo struct {
	ID        string `json:"id"`
	Turn      uint32 `json:"turn"`
	ServedBy  string `json:"served_by"`
	Successor *struct {
		Peer string `json:"peer"`
	} `json:"successor"`
	SuccessorReason string `json:"successor_reason,omitempty"`
}

// frame is one response body (non-stream) or one stream event.
type frame struct {
	Choices []struct {
		Delta *struct {
			Content *string `json:"content"`
		} `json:"delta"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Tenzro *tenzroObject    `json:"tenzro"`
	Error  *json.RawMessage `json:"error"`
}

// answer is what one call returned.
type answer struct {
	Text   string
	Finish string
	Done   bool // a stream's [DONE], or a non-stream 200 with a finish reason
	Tenzro *tenzroObject
	Err    string // an error event in the stream, or why it broke
}

// errNoFrames marks a stream that ended before any event.
var errNoFrames = errors.New("stream: no events")

// parseStream reads a chat completion's server-sent events. It never
// fails on a malformed event: that is history the checker must judge
// (a stream that ends without [DONE] is incomplete), so it is kept in Err.
//
// onText, if set, is called once, at the first text.
func parseStream(r io.Reader, onText func()) (answer, error) {
	var a answer
	var text strings.Builder
	events := 0
	err := devproc.Lines(r, "data: ", func(data string) bool {
		events++
		if a.Done {
			a.Err = "an event after [DONE]"
			a.Done = false
			return false
		}
		if data == "[DONE]" {
			a.Done = true
			return true
		}
		var f frame
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			a.Err = fmt.Sprintf("undecodable event: %.80s", data)
			return false
		}
		if f.Error != nil {
			a.Err = string(*f.Error)
			return false
		}
		for _, c := range f.Choices {
			if c.Delta != nil && c.Delta.Content != nil {
				text.WriteString(*c.Delta.Content)
				if onText != nil && *c.Delta.Content != "" {
					onText()
					onText = nil
				}
			}
			if c.FinishReason != nil {
				a.Finish = *c.FinishReason
			}
		}
		if f.Tenzro != nil {
			a.Tenzro = f.Tenzro
		}
		return true
	})
	a.Text = text.String()
	if err != nil {
		a.Done = false
		a.Err = "stream broke: " + err.Error()
	}
	if a.Done && a.Finish == "" {
		a.Done = false
		a.Err = "[DONE] without a finish reason"
	}
	if events == 0 {
		return a, errNoFrames
	}
	return a, nil
}

// parseBody reads a non-streamed chat completion.
func parseBody(b []byte) (answer, error) {
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		return answer{}, fmt.Errorf("decode response: %w", err)
	}
	if len(f.Choices) != 1 || f.Choices[0].Message == nil {
		return answer{}, fmt.Errorf("response has %d choices, want one message", len(f.Choices))
	}
	a := answer{Text: f.Choices[0].Message.Content, Tenzro: f.Tenzro}
	if fr := f.Choices[0].FinishReason; fr != nil && *fr != "" {
		a.Finish, a.Done = *fr, true
	}
	return a, nil
}

// chatRequest is one call's request, everything the checker needs to
// recompute its answer.
type chatRequest struct {
	Prompt    string `json:"prompt"`
	Seed      int64  `json:"seed"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	Pin       string `json:"pin,omitempty"` // provider peer ID
	NoHedge   bool   `json:"no_hedge,omitempty"`
	// History is a session turn's conversation before Prompt (the
	// earlier prompts and answers); Session is its ID after the first
	// turn, which asks for continuity instead.
	History []inference.Message `json:"history,omitempty"`
	Session string              `json:"session,omitempty"`
	Turn    int                 `json:"turn,omitempty"` // 1-based, a session turn's
}

// messages is the request's conversation: its history, then the prompt.
func (r chatRequest) messages() []inference.Message {
	return append(append([]inference.Message(nil), r.History...), inference.Message{Role: "user", Content: r.Prompt})
}

func (r chatRequest) body(model string) map[string]any {
	body := map[string]any{"model": model, "max_tokens": r.MaxTokens, "seed": r.Seed, "stream": r.Stream,
		"messages": r.messages()}
	devproc.Route{Provider: r.Pin, NoHedge: r.NoHedge, Continuity: r.Turn == 1}.Add(body)
	return body
}

var callClient = &http.Client{Timeout: 45 * time.Second}

// doCall makes one chat completion at api with token; status is the HTTP
// status (0 if none came).
func doCall(ctx context.Context, api, token, model string, r chatRequest, onText func()) (answer, int, error) {
	resp, status, err := devproc.PostChat(ctx, callClient, api, token, r.Session, r.body(model))
	if err != nil {
		return answer{}, status, err
	}
	defer resp.Body.Close()
	if r.Stream {
		a, err := parseStream(resp.Body, onText)
		return a, resp.StatusCode, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return answer{}, resp.StatusCode, err
	}
	a, err := parseBody(b)
	return a, resp.StatusCode, err
}
