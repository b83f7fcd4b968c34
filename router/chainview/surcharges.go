package chainview

import (
	"context"
	"fmt"
	"sync"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// surchargesOf are the governed params' verification surcharges. Both
// sides mean the same unit: flat micro-units per call, added once to the
// rate card's price (pricing.Price).
func surchargesOf(p ledger.Params) pricing.Surcharges {
	return pricing.Surcharges{None: p.SurchargeNone, Receipt: p.SurchargeReceipt,
		Optimistic: p.SurchargeOptimistic, TEE: p.SurchargeTEE}
}

// Surcharges reads the surcharges from the chain's params, once per
// block: governance changes them only in a block, so a value read at
// height h holds until h+1 commits.
type Surcharges struct {
	c *consensus.Node

	mu     sync.Mutex
	height int64
	s      pricing.Surcharges
	ok     bool
}

// NewSurcharges reads c's params.
func NewSurcharges(c *consensus.Node) *Surcharges { return &Surcharges{c: c} }

// Surcharges implements gateway.SurchargeSource.
func (c *Surcharges) Surcharges(ctx context.Context) (pricing.Surcharges, error) {
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
		return pricing.Surcharges{}, fmt.Errorf("chainview: chain params: %w", err)
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
