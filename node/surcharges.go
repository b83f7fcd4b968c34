package node

import (
	"context"

	"github.com/tenzrod/tenzrod/router/chainview"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// surcharges are what this node quotes: its gateway's (the chain's with a
// chain), the chain's on a node that routes nothing, else the configured
// fallback.
func (n *Node) surcharges(ctx context.Context) (pricing.Surcharges, error) {
	switch {
	case n.gateway != nil:
		return n.gateway.Surcharges(ctx)
	case n.chain != nil:
		return chainview.NewSurcharges(n.chain).Surcharges(ctx)
	}
	return n.cfg.Router.Surcharges, nil
}
