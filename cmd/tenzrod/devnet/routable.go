package devnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// waitRoutable polls the gateway's tenzro_quoteInference until it quotes
// model at n providers (each up, warm and announced there), so the
// request printed in the welcome works the moment it is shown: a provider
// whose heartbeats arrived before its announcement is up but not yet
// routable.
func waitRoutable(ctx context.Context, api, model string, n int) error {
	have := 0
	for {
		callCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		q, err := QuotedAt(callCtx, api, model)
		cancel()
		if err == nil {
			have = q
			if have >= n {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d providers routable: %w", have, n, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// QuotedAt is how many providers the routing node at api quotes model at:
// the providers a call of model can go to now. The chaos soak and the
// end-to-end tests wait on it as the devnet does.
func QuotedAt(ctx context.Context, api, model string) (int, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tenzro_quoteInference",
		"params": map[string]any{"model": model, "units": map[string]uint64{"input_tokens": 1, "output_tokens": 1}}})
	if err != nil {
		return 0, fmt.Errorf("devnet: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/rpc", bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("devnet: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("devnet: quotes: %w", err)
	}
	defer resp.Body.Close()
	var r struct {
		Result []json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, fmt.Errorf("devnet: quotes: %w", err)
	}
	return len(r.Result), nil
}
