package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
)

// signedRecord is what a buyer keeps of a response's
// tenzro.payment.signed.
type signedRecord struct {
	devproc.SignedRecord
	// Nonce is the receipt's (from the response, not the record).
	Nonce string `json:"-"`
}

type tenzroPart struct {
	Tenzro *struct {
		Payment struct {
			Signed *signedRecord `json:"signed"`
		} `json:"payment"`
		Receipt struct {
			Receipt struct {
				Nonce string `json:"nonce"`
			} `json:"receipt"`
		} `json:"receipt"`
		Experts []expertPart `json:"experts"`
	} `json:"tenzro"`
}

func (p tenzroPart) signed() *signedRecord {
	if p.Tenzro == nil || p.Tenzro.Payment.Signed == nil {
		return nil
	}
	r := *p.Tenzro.Payment.Signed
	r.Nonce = p.Tenzro.Receipt.Receipt.Nonce
	return &r
}

var callClient = &http.Client{Timeout: 30 * time.Second}

// chatOpts shape one paid call.
type chatOpts struct {
	stream    bool
	maxTokens int    // 0: 6, or 48 for a stream (long enough for a kill to land in it)
	pin       string // a provider peer ID the call must go to
	n         int    // makes the prompt, and so the request digest, unique
	onText    func() // called once, at a stream's first text
	noHedge   bool
	experts   *[]expertPart // where set, gets the answer's tenzro.experts
	client    *http.Client  // nil: callClient (the WAN test's reaches into a namespace)
}

// paidChat makes one chat completion at api (a routing node's base URL)
// with token and returns the signed payment record the response carried.
// A stream counts once its tenzro chunk arrived, even if the connection
// broke later: the buyer holds the record then.
func paidChat(ctx context.Context, api, token, model string, o chatOpts) (*signedRecord, error) {
	if o.maxTokens == 0 {
		o.maxTokens = 6
		if o.stream {
			o.maxTokens = 48
		}
	}
	body := map[string]any{"model": model, "max_tokens": o.maxTokens,
		"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("crash test call %d", o.n)}}}
	if o.stream {
		body["stream"] = true
	}
	devproc.Route{Provider: o.pin, NoHedge: o.noHedge}.Add(body)
	client := callClient
	if o.client != nil {
		client = o.client
	}
	resp, _, err := devproc.PostChat(ctx, client, api, token, "", body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if !o.stream {
		var p tenzroPart
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			return nil, fmt.Errorf("decode response: %w", err)
		}
		if p.signed() == nil {
			return nil, fmt.Errorf("response carries no signed payment record")
		}
		if o.experts != nil {
			*o.experts = p.Tenzro.Experts
		}
		return p.signed(), nil
	}
	var got *signedRecord
	var streamErr string
	err = devproc.Lines(resp.Body, "data: ", func(data string) bool {
		if data == "[DONE]" {
			return true
		}
		if o.onText != nil && strings.Contains(data, `"content":"`) && !strings.Contains(data, `"content":""`) {
			o.onText()
			o.onText = nil
		}
		if strings.HasPrefix(data, `{"error"`) {
			streamErr = data
		}
		var p tenzroPart
		if json.Unmarshal([]byte(data), &p) == nil && p.signed() != nil {
			got = p.signed()
			if o.experts != nil {
				*o.experts = p.Tenzro.Experts
			}
		}
		return true
	})
	if got == nil {
		return nil, fmt.Errorf("stream ended without a signed payment record (%w %s)", err, streamErr)
	}
	return got, nil
}

// failureKind shortens a call error to a class for counting.
func failureKind(err error) string {
	s := err.Error()
	switch {
	case strings.HasPrefix(s, "status "):
		if i := strings.Index(s, `"code":"`); i >= 0 {
			rest := s[i+len(`"code":"`):]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return s[:len("status 000")] + " " + rest[:j]
			}
		}
		return s[:min(len(s), len("status 000"))]
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "EOF"), strings.Contains(s, "reset by peer"):
		return "connection broken"
	}
	return s[:min(len(s), 60)]
}

// metric reads one unlabelled series from a node's /metrics (0 if absent).
func metric(api, name string) (float64, error) {
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Get(api + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var v float64
	var parseErr error
	err = devproc.Lines(resp.Body, name+" ", func(rest string) bool {
		v, parseErr = strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return false
	})
	if err != nil {
		return 0, err
	}
	return v, parseErr
}

// quotedAt is how many providers the routing node at api quotes model at.
func quotedAt(api, model string) int { return devproc.Quoted(api, model, 3*time.Second) }

// waitFor polls cond every 100 ms until it holds, failing the test with
// what after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	took, ok := devproc.WaitUntil(limit, 100*time.Millisecond, cond)
	if !ok {
		t.Fatalf("%s: not within %s", what, limit)
	}
	return took
}
