package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/node"
)

const rpcTimeout = 5 * time.Second

var rpcClient = &http.Client{Timeout: rpcTimeout}

// rpcCall makes one JSON-RPC call to a node's API; rpcTimeout bounds it
// as it bounds the soak's other requests.
func rpcCall(api, method string, params, result any) error {
	return devproc.RPC(api, method, params, result, rpcTimeout)
}

// nodeInfo is the node's tenzro_nodeInfo (ok false if it did not answer).
func nodeInfo(api string) (node.NodeInfo, bool) {
	var info node.NodeInfo
	return info, rpcCall(api, "tenzro_nodeInfo", nil, &info) == nil
}

// heightAt is the chain height the node has committed (0: no answer).
func heightAt(api string) int64 { return devproc.Height(api, rpcTimeout) }

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
func quotedAt(api, model string) int { return devproc.Quoted(api, model, rpcTimeout) }

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
