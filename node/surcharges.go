package node

import (
	"context"
	"fmt"
	"sync"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// surchargesOf are the governed params' verification surcharges. Both
// sides mean the same unit: flat micro-units per call, added once to the
// rate card's price (pricing.Price).
func surchargesOf(p ledger.Params) pricing.Surcharges {
	return pricing.Surcharges{None: p.SurchargeNone, Receipt: p.SurchargeReceipt,
		Optimistic: p.SurchargeOptimistic, TEE: p.SurchargeTEE}
}

// chainSurcharges reads the surcharges from the chain's params, once per
// block: governance changes them only in a block, so a value read at
// height h holds until h+1 commits.
type chainSurcharges struct {
	c *consensus.Node

	mu     sync.Mutex
	height int64
	s      pricing.Surcharges
	ok     bool
}

func newChainSurcharges(c *consensus.Node) *chainSurcharges { return &chainSurcharges{c: c} }

// Surcharges implements gateway.SurchargeSource.
func (c *chainSurcharges) Surcharges(ctx context.Context) (pricing.Surcharges, error) {
	h := c.c.App().Height()
	c.mu.Lock()
	if c.ok && c.height == h {
		s := c.s
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	p, err := c.c.Params(ctx)
	if err != nil {
		return pricing.Surcharges{}, fmt.Errorf("node: chain params: %w", err)
	}
	s := surchargesOf(p)
	c.mu.Lock()
	// Kept only when no block committed during the read: it is then the
	// value of block h.
	if c.c.App().Height() == h {
		c.height, c.s, c.ok = h, s, true
	}
	c.mu.Unlock()
	return s, nil
}

// surcharges are what this node quotes: its gateway's (the chain's with a
// chain), the chain's on a node that routes nothing, else the configured
// fallback.
func (n *Node) surcharges(ctx context.Context) (pricing.Surcharges, error) {
	switch {
	case n.gateway != nil:
		return n.gateway.Surcharges(ctx)
	case n.chain != nil:
		return newChainSurcharges(n.chain).Surcharges(ctx)
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
