package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/node/openai"
)

// TokenHash is the hash a buyer entry keeps of a test's token.
func TokenHash(token string) string { return openai.TokenHash(token) }

// quote is n's tenzro_quoteInference, called in-process.
func (n *Node) quote(ctx context.Context, raw json.RawMessage) (any, error) {
	return n.call(ctx, "tenzro_quoteInference", raw)
}

// call runs one of n's RPC methods in-process, without credentials.
func (n *Node) call(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	h, ok := n.api.rpc.Handler(method)
	if !ok {
		return nil, fmt.Errorf("no method %s", method)
	}
	return h(ctx, raw)
}

// postChat posts body to n's /v1/chat/completions as the holder of token
// ("" for none) and returns the status and the whole response body.
func postChat(t testing.TB, n *Node, token, body string) (int, string) {
	t.Helper()
	return send(t, n.APIURL()+"/v1/chat/completions", token, body)
}

// send sends one request to url, a POST of body (JSON) or a GET when body
// is "", as the holder of token ("" for none), and returns the status and
// the whole response body.
func send(t testing.TB, url, token, body string) (int, string) {
	t.Helper()
	method := http.MethodGet
	if body != "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}
