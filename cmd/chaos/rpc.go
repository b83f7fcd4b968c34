package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/node"
)

var rpcClient = &http.Client{Timeout: 5 * time.Second}

// rpcCall posts one JSON-RPC call to a node's API and decodes its result.
func rpcCall(api, method string, params, result any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("chaos: rpc %s: %w", method, err)
	}
	resp, err := rpcClient.Post(api+"/rpc", "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("chaos: rpc %s: %w", method, err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("chaos: rpc %s: %w", method, err)
	}
	if r.Error != nil {
		return fmt.Errorf("chaos: rpc %s: %d %s", method, r.Error.Code, r.Error.Message)
	}
	return json.Unmarshal(r.Result, result)
}

// nodeInfo is the node's tenzro_nodeInfo (ok false if it did not answer).
func nodeInfo(api string) (node.NodeInfo, bool) {
	var info node.NodeInfo
	return info, rpcCall(api, "tenzro_nodeInfo", nil, &info) == nil
}

// heightAt is the chain height the node has committed (0: no answer).
func heightAt(api string) int64 {
	info, _ := nodeInfo(api)
	return info.Height
}

// providerStatus is one row of tenzro_listProviders.
type providerStatus struct {
	PeerID string `json:"peer_id"`
	Status string `json:"status"`
}

// statusesAt maps provider peer IDs to the status the node at api shows.
func statusesAt(api string) (map[string]string, error) {
	var ps []providerStatus
	if err := rpcCall(api, "tenzro_listProviders", nil, &ps); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range ps {
		out[p.PeerID] = p.Status
	}
	return out, nil
}

// quotedAt is how many providers the routing node at api quotes model at.
func quotedAt(api, model string) int {
	var qs []json.RawMessage
	if err := rpcCall(api, "tenzro_quoteInference", map[string]any{"model": model,
		"units": map[string]uint64{"input_tokens": 1, "output_tokens": 1}}, &qs); err != nil {
		return 0
	}
	return len(qs)
}

// appHashAt asks a node's CometBFT RPC (rpcListen, tcp://host:port) for
// the app hash the block at height h carries in its header.
func appHashAt(rpcListen string, h int64) (string, error) {
	base := "http://" + strings.TrimPrefix(rpcListen, "tcp://")
	resp, err := rpcClient.Get(fmt.Sprintf("%s/block?height=%d", base, h))
	if err != nil {
		return "", fmt.Errorf("chaos: block %d: %w", h, err)
	}
	defer resp.Body.Close()
	var r struct {
		Result struct {
			Block struct {
				Header struct {
					AppHash string `json:"app_hash"`
				} `json:"header"`
			} `json:"block"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", fmt.Errorf("chaos: block %d: %w", h, err)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return "", fmt.Errorf("chaos: block %d: %s", h, r.Error)
	}
	if r.Result.Block.Header.AppHash == "" {
		return "", fmt.Errorf("chaos: block %d: no app hash in the answer", h)
	}
	return r.Result.Block.Header.AppHash, nil
}
