package gateway

import (
	"context"
	"fmt"

	"github.com/tenzrod/tenzrod/router/pricing"
)

// Surcharges are the verification surcharges this gateway quotes and
// bills now: the chain's governed ones where it has a chain (Deps.Surcharges),
// else its configured [router.surcharges]. Both are flat micro-units per
// call, added once to the rate card's price.
func (g *Gateway) Surcharges(ctx context.Context) (pricing.Surcharges, error) {
	if g.surcharges == nil {
		return g.cfg.Surcharges, nil
	}
	s, err := g.surcharges.Surcharges(ctx)
	if err != nil {
		return pricing.Surcharges{}, fmt.Errorf("gateway: the chain's verification surcharges: %w", err)
	}
	return s, nil
}
