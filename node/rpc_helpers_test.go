package node

import (
	"context"
	"encoding/json"
	"fmt"

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
