package gatewayapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// SessionResult is tenzro_getSession's result: the gateway's entry and,
// with a chain, the standby stream escrow as the chain holds it.
type SessionResult struct {
	gateway.SessionView
	Stream *ledger.Stream `json:"stream,omitempty"`
	// StreamError says why the stream could not be read, when it could not.
	StreamError string `json:"stream_error,omitempty"`
}

// Sessions contributes tenzro_getSession. A session is its buyer's: its
// payer account, turns and standby stream are read only with that buyer's
// bearer token or the operator's admin token, as DELETE /v1/sessions/ID
// ends it only for its buyer.
type Sessions struct {
	Gateway *gateway.Gateway // nil on a provider
	Chain   *consensus.Node  // nil without a chain
	Callers Callers
}

// RegisterRPC contributes tenzro_getSession.
func (a Sessions) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_getSession", func(ctx context.Context, raw json.RawMessage) (any, error) {
		if a.Gateway == nil {
			return nil, rpc.Unavailable("this node is a provider; it keeps no sessions")
		}
		p, err := rpc.Params[struct {
			ID string `json:"id"`
		}](raw)
		if err != nil {
			return nil, err
		}
		if err := gateway.CheckSessionID(p.ID); err != nil {
			return nil, rpc.InvalidParams("id: %v", err)
		}
		admin, payer, err := a.Callers.Caller(rpc.Header(ctx))
		if err != nil {
			return nil, rpc.Unauthorized("tenzro_getSession: %v: the session's buyer token or the operator's admin token", err)
		}
		v, ok := a.Gateway.Session(p.ID)
		// Another buyer's session is answered as no session: a token
		// proves nothing about sessions that are not its own.
		if !ok || !admin && v.Payer != payer {
			return nil, rpc.InvalidParams("no session %s at this gateway (never started, or ended idle)", p.ID)
		}
		res := SessionResult{SessionView: v}
		if a.Chain != nil && v.Successor != nil && v.Successor.StreamID != "" {
			res.Stream, res.StreamError = a.stream(ctx, v.Successor.StreamID)
		}
		return res, nil
	})
}

func (a Sessions) stream(ctx context.Context, id string) (*ledger.Stream, string) {
	h, err := terms.ParseHash(id)
	if err != nil {
		return nil, err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, ok, err := a.Chain.Stream(ctx, h)
	switch {
	case err != nil:
		return nil, err.Error()
	case !ok:
		return nil, fmt.Sprintf("stream %s is not on chain yet", id)
	}
	return &st, ""
}
