package devproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Route is what a chat call asks of the router in its tenzro object.
type Route struct {
	Provider   string // a provider peer ID the call must go to
	NoHedge    bool
	Continuity bool // a session's first turn: keep its successor warm
}

// Add sets body's tenzro object from r, and none when r asks nothing.
func (r Route) Add(body map[string]any) {
	opts := map[string]any{}
	if r.Continuity {
		opts["session"] = map[string]any{"continuity": true}
	}
	if r.Provider != "" {
		opts["provider"] = r.Provider
	}
	if r.NoHedge {
		opts["hedge"] = false
	}
	if len(opts) > 0 {
		body["tenzro"] = opts
	}
}

// PostChat posts body to the chat completions of the routing node at api
// with token, and session as X-Tenzro-Session when set. It returns the
// HTTP status (0 if none came); a status other than 200 is an error
// "status N: " and the body's start, which callers classify by. On 200
// the caller reads and closes the response's body.
func PostChat(ctx context.Context, client *http.Client, api, token, session string, body map[string]any) (*http.Response, int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, 0, fmt.Errorf("devproc: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/v1/chat/completions", bytes.NewReader(b))
	if err != nil {
		return nil, 0, fmt.Errorf("devproc: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("X-Tenzro-Session", session)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, resp.StatusCode, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	return resp, resp.StatusCode, nil
}

// Lines calls fn with the rest of each line of r that starts with prefix
// ("data: " for server-sent events, a series' name and a space for
// /metrics), in order, until fn returns false; it returns the reader's
// error.
func Lines(r io.Reader, prefix string, fn func(rest string) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok && !fn(rest) {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("devproc: %w", err)
	}
	return nil
}

// SignedRecord is what a buyer keeps of a response's
// tenzro.payment.signed: the chain's payment record the routing node
// signed as settler, which the checks then look for on chain.
type SignedRecord struct {
	Payer         string `json:"payer"`
	Settler       string `json:"settler"`
	Provider      string `json:"provider_machine"`
	RequestDigest string `json:"request_digest"`
	Price         uint64 `json:"price"`
}
