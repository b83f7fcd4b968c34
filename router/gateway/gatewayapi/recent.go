package gatewayapi

import (
	"context"
	"encoding/json"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/hedge"
)

// RecentParams are tenzro_listRecentRequests' parameters, both optional:
// requests finished after sequence number After (0: from the oldest
// kept), at most Limit of them (0: all kept), newest first.
type RecentParams struct {
	After uint64 `json:"after"`
	Limit int    `json:"limit"`
}

// RecentResult is tenzro_listRecentRequests' result. Last is the newest
// request's sequence number (After when there is none), for the next poll.
type RecentResult struct {
	Kept     int                     `json:"kept"`
	Last     uint64                  `json:"last"`
	Requests []gateway.RecentRequest `json:"requests"`
}

// LatencyParams are tenzro_getLatencies' parameters: one provider's peer
// ID, or none for every provider observed.
type LatencyParams struct {
	Provider string `json:"provider"`
}

// LatencyResult is tenzro_getLatencies' result, with the bounds the
// hedge delay is clamped to.
type LatencyResult struct {
	HedgeMinMs float64               `json:"hedge_min_ms"`
	HedgeMaxMs float64               `json:"hedge_max_ms"`
	Providers  []gateway.LatencyView `json:"providers"`
}

// Recent is the routing side's view of its own recent work; Gateway is
// nil on a provider.
type Recent struct{ Gateway *gateway.Gateway }

// RegisterRPC contributes tenzro_listRecentRequests and tenzro_getLatencies.
func (a Recent) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_listRecentRequests", func(_ context.Context, raw json.RawMessage) (any, error) {
		p, err := parseRecentParams(raw)
		if err != nil {
			return nil, err
		}
		if a.Gateway == nil {
			return nil, errNotRouting
		}
		rs := a.Gateway.Recent(p.After, p.Limit)
		last := p.After
		if len(rs) > 0 {
			last = rs[0].Seq
		}
		return RecentResult{Kept: gateway.RecentKept, Last: last, Requests: rs}, nil
	})
	s.Register("tenzro_getLatencies", func(_ context.Context, raw json.RawMessage) (any, error) {
		pid, err := parseLatencyParams(raw)
		if err != nil {
			return nil, err
		}
		if a.Gateway == nil {
			return nil, errNotRouting
		}
		return LatencyResult{HedgeMinMs: float64(hedge.MinDelay.Milliseconds()), HedgeMaxMs: float64(hedge.MaxDelay.Milliseconds()),
			Providers: a.Gateway.Latencies(pid)}, nil
	})
}

var errNotRouting = rpc.Unavailable("this node is a provider; it does not route requests")

func parseRecentParams(raw json.RawMessage) (RecentParams, error) {
	p, err := rpc.Params[RecentParams](raw)
	if err != nil {
		return p, err
	}
	if p.Limit < 0 || p.Limit > gateway.RecentKept {
		return p, rpc.InvalidParams("limit: %d is not in 0..%d (0: every request kept)", p.Limit, gateway.RecentKept)
	}
	return p, nil
}

func parseLatencyParams(raw json.RawMessage) (peer.ID, error) {
	p, err := rpc.Params[LatencyParams](raw)
	if err != nil || p.Provider == "" {
		return "", err
	}
	pid, err := peer.Decode(p.Provider)
	if err != nil {
		return "", rpc.InvalidParams("provider: %q is not a peer ID: %v", p.Provider, err)
	}
	return pid, nil
}
