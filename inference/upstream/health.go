package upstream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// checkTimeout bounds one health check: a loopback engine answers its
// model list in milliseconds, a remote one well within this.
const checkTimeout = 2 * time.Second

// Check asks the engine whether it answers: GET {base}/models, which
// llama.cpp's server, vLLM and Ollama all serve without generating
// anything. Any 2xx is healthy; an error or another status is returned.
func (c *Client) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.BaseURL+"/models", nil)
	if err != nil {
		return fmt.Errorf("upstream: check: %w", err)
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("upstream: check: GET /models answered HTTP %d", resp.StatusCode)
	}
	return nil
}
