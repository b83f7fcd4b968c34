package devproc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/node"
)

// RPC makes one JSON-RPC call to the node at api through the CLI's own
// client, which has limit to answer, and decodes its result into result.
// Callers poll with it, so a node that is down or stalled costs one limit.
func RPC(api, method string, params, result any, limit time.Duration) error {
	c, err := shell.NewClient(api)
	if err != nil {
		return fmt.Errorf("devproc: rpc %s: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	raw, err := c.Call(ctx, method, params)
	if err != nil {
		return fmt.Errorf("devproc: rpc: %w", err)
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("devproc: rpc %s: %w", method, err)
	}
	return nil
}

// Height is the chain height the node at api has committed (0: no answer
// within limit).
func Height(api string, limit time.Duration) int64 {
	var info node.NodeInfo
	if RPC(api, "tenzro_nodeInfo", nil, &info, limit) != nil {
		return 0
	}
	return info.Height
}

// Quoted is how many providers the routing node at api quotes model at
// (0: no answer within limit).
func Quoted(api, model string, limit time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	n, _ := devnet.QuotedAt(ctx, api, model)
	return n
}
