package node

import (
	"context"

	"github.com/tenzrod/tenzrod/router/chainview"
	"github.com/tenzrod/tenzrod/router/gateway"
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

// logSurcharges says at start where the verification surcharges come
// from, so an operator who set [router.surcharges] on a chain node knows
// they are not used.
func (n *Node) logSurcharges() {
	if n.chain != nil {
		msg := "verification surcharges are the chain's surcharge_* params (tenzro_getParams); [router.surcharges] is ignored with a chain"
		if n.cfg.Router.Surcharges != gateway.DefaultConfig().Surcharges {
			// Set by hand: say louder that it has no effect here.
			n.log.Warn(msg, "ignored", n.cfg.Router.Surcharges)
			return
		}
		n.log.Info(msg)
		return
	}
	s := n.cfg.Router.Surcharges
	n.log.Info("no chain: verification surcharges are the configured [router.surcharges] fallback",
		"none", s.None, "receipt", s.Receipt, "optimistic", s.Optimistic, "tee", s.TEE)
}
