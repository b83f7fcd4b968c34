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
	client := &http.Client{Timeout: 2 * time.Second}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tenzro_quoteInference",
		"params": map[string]any{"model": model, "units": map[string]uint64{"input_tokens": 1, "output_tokens": 1}}})
	if err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	have := 0
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, api+"/rpc", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := client.Do(req); err == nil {
			var r struct {
				Result []json.RawMessage `json:"result"`
			}
			if json.NewDecoder(resp.Body).Decode(&r) == nil {
				have = len(r.Result)
			}
			resp.Body.Close()
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
