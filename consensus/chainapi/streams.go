package chainapi

import (
	"context"
	"encoding/json"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// StreamParams are tenzro_getStream's parameters.
type StreamParams struct {
	ID string `json:"id"` // 64 hex digits, as tenzro_getSession names a standby stream
}

// StreamView is tenzro_getStream's result: one stream escrow, open or
// closed (tenzro_getAccount lists only the open ones), with what it still
// holds.
type StreamView struct {
	Stream  ledger.Stream `json:"stream"`
	Balance uint64        `json:"balance"` // deposit − claimed − refunded
	Height  int64         `json:"height"`
}

// Streams looks stream escrows up by ID.
type Streams struct{ Node *consensus.Node }

// RegisterRPC contributes tenzro_getStream.
func (a Streams) RegisterRPC(s rpc.Registry) {
	s.Register("tenzro_getStream", chainMethod(a.Node, func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[StreamParams](raw)
		if err != nil {
			return nil, err
		}
		id, err := terms.ParseHash(p.ID)
		if err != nil {
			return nil, rpc.InvalidParams("id: %q is not a 64-hex-digit stream ID", p.ID)
		}
		h := c.App().Height()
		st, ok, err := c.Stream(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, rpc.InvalidParams("id: no stream %s", id)
		}
		return StreamView{Stream: st, Balance: st.Balance(), Height: h}, nil
	}))
}
