package attacktest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// answer is what one chat call returned.
type answer struct {
	Status  int
	Body    []byte
	Took    time.Duration
	Record  *receipt.PaymentRecord // the gateway-signed chain record, if any
	Session string                 // the session ID, for a session turn
}

// chat posts one chat completion with token ("" sends none); extra is
// merged into the request's tenzro object.
func (t *Target) chat(ctx context.Context, token, content string, maxTokens int, extra map[string]any) (answer, error) {
	tz := map[string]any{"verification": "receipt", "hedge": false}
	if t.Provider != "" {
		tz["provider"] = t.Provider
	}
	for k, v := range extra {
		tz[k] = v
	}
	body, _ := json.Marshal(map[string]any{"model": t.Model, "max_tokens": maxTokens,
		"messages": []map[string]string{{"role": "user", "content": content}}, "tenzro": tz})
	return t.post(ctx, "/v1/chat/completions", token, body)
}

func (t *Target) post(ctx context.Context, path, token string, body []byte) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.API+path, bytes.NewReader(body))
	if err != nil {
		return answer{}, fmt.Errorf("attacktest: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := t.HTTP.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("attacktest: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	a := answer{Status: resp.StatusCode, Body: raw, Took: time.Since(start)}
	if err != nil {
		return a, fmt.Errorf("attacktest: POST %s: read: %w", path, err)
	}
	var out struct {
		Tenzro struct {
			Payment *struct {
				Signed *struct {
					Record []byte `json:"record"`
				} `json:"signed"`
			} `json:"payment"`
			Session *struct {
				ID string `json:"id"`
			} `json:"session"`
		} `json:"tenzro"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil {
		return a, nil
	}
	if s := out.Tenzro.Session; s != nil {
		a.Session = s.ID
	}
	if p := out.Tenzro.Payment; p != nil && p.Signed != nil {
		var rec receipt.PaymentRecord
		if err := cborx.UnmarshalCanonical(p.Signed.Record, ledger.MaxTxBytes, &rec); err != nil {
			return a, fmt.Errorf("attacktest: the answer's signed record: %w", err)
		}
		a.Record = &rec
	}
	return a, nil
}

// paidCall makes one honest call and requires a signed record in its
// answer: what every record attack starts from.
func (e *env) paidCall(ctx context.Context, content string) (answer, error) {
	a, err := e.t.chat(ctx, e.t.Token, content, 4, nil)
	if err != nil {
		return a, err
	}
	if a.Status != http.StatusOK {
		return a, fmt.Errorf("attacktest: honest call: HTTP %d %.300s", a.Status, a.Body)
	}
	if a.Record == nil {
		return a, fmt.Errorf("attacktest: honest call: no signed payment record in the answer (is the gateway on a chain?)")
	}
	e.note(a)
	return a, nil
}

// paidReceipt is paidCall with its record's receipt parsed.
func (e *env) paidReceipt(ctx context.Context, content string) (answer, *identity.Envelope, *receipt.Receipt, error) {
	a, err := e.paidCall(ctx, content)
	if err != nil {
		return a, nil, nil, err
	}
	env, rc, err := receipt.Parse(a.Record.Receipt)
	if err != nil {
		return a, nil, nil, fmt.Errorf("attacktest: the answer's receipt: %w", err)
	}
	return a, env, rc, nil
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
