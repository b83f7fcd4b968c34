package chainapi

import (
	"context"
	"encoding/json"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// DisputeParams are tenzro_getDispute's parameters.
type DisputeParams struct {
	ID string `json:"id"` // 64 hex digits
}

// DisputeView is tenzro_getDispute's result: the dispute with its
// evidence (what a committee member re-executes).
type DisputeView struct {
	Dispute  ledger.Dispute         `json:"dispute"`
	Evidence ledger.DisputeEvidence `json:"evidence"`
	Height   int64                  `json:"height"`
}

// ListDisputesParams are tenzro_listDisputes' parameters, each optional:
// a status name, the accused machine, and the heights the dispute was
// opened from and to (inclusive).
type ListDisputesParams struct {
	Status   string `json:"status"`
	Provider string `json:"provider"`
	From     int64  `json:"from"`
	To       int64  `json:"to"`
}

// disputeFilter is ListDisputesParams checked.
type disputeFilter struct {
	status   ledger.DisputeStatus // 0 = any
	provider identity.MachineID   // zero = any
	from, to int64                // to 0 = no bound
}

func (p ListDisputesParams) filter() (disputeFilter, error) {
	var f disputeFilter
	if p.Status != "" {
		s, err := ledger.ParseDisputeStatus(p.Status)
		if err != nil {
			return f, rpc.InvalidParams("status: %v", err)
		}
		f.status = s
	}
	if p.Provider != "" {
		m, err := identity.ParseMachineID(p.Provider)
		if err != nil {
			return f, rpc.InvalidParams("provider: %v", err)
		}
		f.provider = m
	}
	if p.From < 0 || p.To < 0 || (p.To != 0 && p.To < p.From) {
		return f, rpc.InvalidParams("from %d, to %d: want 0 <= from <= to (to 0: no bound)", p.From, p.To)
	}
	f.from, f.to = p.From, p.To
	return f, nil
}

func (f disputeFilter) keep(d *ledger.Dispute) bool {
	switch {
	case f.status != 0 && d.Status != f.status:
		return false
	case !f.provider.IsZero() && d.Provider != f.provider:
		return false
	case d.OpenHeight < f.from:
		return false
	case f.to != 0 && d.OpenHeight > f.to:
		return false
	}
	return true
}

// Disputes is the chain's dispute visibility.
type Disputes struct{ Node *consensus.Node }

// RegisterRPC contributes tenzro_getDispute and tenzro_listDisputes.
func (a Disputes) RegisterRPC(s rpc.Registry) {
	chain := func(h chainHandler) rpc.Handler { return chainMethod(a.Node, h) }
	s.Register("tenzro_getDispute", chain(func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[DisputeParams](raw)
		if err != nil {
			return nil, err
		}
		id, err := terms.ParseHash(p.ID)
		if err != nil {
			return nil, rpc.InvalidParams("id: %q is not a 64-hex-digit dispute ID", p.ID)
		}
		h := c.App().Height()
		d, ok, err := c.Dispute(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, rpc.InvalidParams("id: no dispute %s", id)
		}
		e, _, err := c.DisputeEvidence(ctx, id)
		if err != nil {
			return nil, err
		}
		return DisputeView{Dispute: d, Evidence: e, Height: h}, nil
	}))
	s.Register("tenzro_listDisputes", chain(func(ctx context.Context, c *consensus.Node, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[ListDisputesParams](raw)
		if err != nil {
			return nil, err
		}
		f, err := p.filter()
		if err != nil {
			return nil, err
		}
		ds, err := c.Disputes(ctx)
		if err != nil {
			return nil, err
		}
		out := []ledger.Dispute{}
		for i := range ds {
			if f.keep(&ds[i]) {
				out = append(out, ds[i])
			}
		}
		return map[string]any{"disputes": out, "height": c.App().Height()}, nil
	}))
}
