package gossip

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tenzrod/tenzrod/node/rpc"
)

// TailParams are tenzro_tailGossip's parameters.
type TailParams struct {
	Topic  string `json:"topic"`
	After  uint64 `json:"after"`
	Limit  int    `json:"limit"`
	WaitMs int    `json:"wait_ms"`
}

// TailResult is tenzro_tailGossip's result.
type TailResult struct {
	Events []Event `json:"events"`
	Next   uint64  `json:"next"`
}

// maxTailWait bounds a tail's long poll.
const maxTailWait = 30 * time.Second

// RegisterRPC contributes tenzro_listTopics and tenzro_tailGossip: the
// topics this node joined and the messages it accepted on them.
func (s *Service) RegisterRPC(r rpc.Registry) {
	r.Register("tenzro_listTopics", func(context.Context, json.RawMessage) (any, error) {
		return s.Topics(), nil
	})
	r.Register("tenzro_tailGossip", s.tail)
}

func (s *Service) tail(ctx context.Context, raw json.RawMessage) (any, error) {
	p, err := rpc.Params[TailParams](raw)
	if err != nil {
		return nil, err
	}
	var kind Kind
	if p.Topic != "" {
		if kind, err = ParseTopic(s.cfg.Network, p.Topic); err != nil {
			return nil, rpc.InvalidParams("topic: %v", err)
		}
	}
	tap := s.Tap()
	if p.After == 0 {
		return TailResult{Events: []Event{}, Next: tap.Head()}, nil
	}
	if p.Limit <= 0 || p.Limit > 1000 {
		p.Limit = 100
	}
	wait := min(time.Duration(max(p.WaitMs, 0))*time.Millisecond, maxTailWait)
	events, next := tap.Since(ctx, p.After, kind, p.Limit, wait)
	if events == nil {
		events = []Event{}
	}
	return TailResult{Events: events, Next: next}, nil
}
