package chainview

import (
	"context"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Registry is also the gossip.ValidatorSet that price observations
// are admitted against: the active validators and provider registrations
// of the last committed block, each read once per block.

type validatorsAt struct {
	height int64
	active map[[32]byte]bool
}

type providerAt struct {
	height int64
	p      ledger.Provider
	ok     bool
}

// ActiveValidator reports whether account operates a validator with power.
func (r *Registry) ActiveValidator(ctx context.Context, account [32]byte) (bool, error) {
	h := r.chain.App().Height()
	r.mu.Lock()
	c := r.validators
	r.mu.Unlock()
	if c.active == nil || c.height != h {
		vs, err := r.chain.Validators(ctx)
		if err != nil {
			return false, err
		}
		c = validatorsAt{height: h, active: make(map[[32]byte]bool, len(vs))}
		for _, v := range vs {
			if v.Power > 0 {
				c.active[v.Operator] = true
			}
		}
		r.mu.Lock()
		r.validators = c
		r.mu.Unlock()
	}
	return c.active[account], nil
}

// ProviderOperator returns the operator account and peer ID of machine m.
func (r *Registry) ProviderOperator(ctx context.Context, m identity.MachineID) ([32]byte, string, bool, error) {
	h := r.chain.App().Height()
	r.mu.Lock()
	c, hit := r.providers[m]
	r.mu.Unlock()
	if !hit || c.height != h {
		p, ok, err := r.chain.Provider(ctx, m)
		if err != nil {
			return [32]byte{}, "", false, err
		}
		c = providerAt{height: h, p: p, ok: ok}
		r.mu.Lock()
		if len(r.providers) > 4096 {
			clear(r.providers)
		}
		r.providers[m] = c
		r.mu.Unlock()
	}
	if !c.ok || c.p.UnbondAt != 0 {
		return [32]byte{}, "", false, nil
	}
	return c.p.Operator, c.p.PeerID, true, nil
}
