package chainview

import (
	"context"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Registry is what gossip and the provider table read of the chain: the
// machine registered for a peer (gossip.Registry) and, through the pins'
// cache, the router.Registry with standings cached per block.
type Registry struct {
	chain *consensus.Node
	pins  *gossip.RegistryPins

	mu         sync.Mutex
	standing   map[identity.MachineID]cachedStanding
	validators validatorsAt
	providers  map[identity.MachineID]providerAt
}

type cachedStanding struct {
	height int64
	bp     uint32
	ok     bool
	barred bool
}

// NewRegistry reads chain's registrations; the pins age by clk.
func NewRegistry(chain *consensus.Node, clk clock.Clock) *Registry {
	r := &Registry{chain: chain, standing: map[identity.MachineID]cachedStanding{}, providers: map[identity.MachineID]providerAt{}}
	r.pins = gossip.NewRegistryPins(r, clk)
	return r
}

// Pins are the registrations gossip pins peers to.
func (r *Registry) Pins() *gossip.RegistryPins { return r.pins }

// MachineOf reads the registration of p from the chain.
func (r *Registry) MachineOf(ctx context.Context, p peer.ID) (identity.MachineID, bool, error) {
	return r.chain.ProviderByPeer(ctx, p.String())
}

// Registered is the pins' cached answer.
func (r *Registry) Registered(p peer.ID) (identity.MachineID, bool) { return r.pins.Registered(p) }

// StandingBP reads m's standing, once per committed block.
func (r *Registry) StandingBP(m identity.MachineID) (uint32, bool) {
	c := r.standingOf(m)
	return c.bp, c.ok
}

// Barred reports whether the chain bars m (router.Barrer): convicted and
// not re-bonded since, as of the last committed block. It shares the
// standing's read, so the rotation drops a convict with the block that
// convicts it.
func (r *Registry) Barred(m identity.MachineID) bool { return r.standingOf(m).barred }

// standingOf reads m's standing, once per committed block; a read the
// chain could not answer is not cached.
func (r *Registry) standingOf(m identity.MachineID) cachedStanding {
	h := r.chain.App().Height()
	r.mu.Lock()
	c, hit := r.standing[m]
	r.mu.Unlock()
	if hit && c.height == h {
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := r.chain.Standing(ctx, m, h)
	fresh := cachedStanding{height: h}
	if err == nil {
		fresh.bp, fresh.ok, fresh.barred = uint32(min(st.StandingBP, ledger.BasisPoints)), true, st.Barred
	} else if ctx.Err() != nil || ledger.CodeOf(err) != ledger.CodeUnknownProvider {
		// Not cached: the chain could not answer. A bar it showed
		// before stands meanwhile.
		return cachedStanding{barred: hit && c.barred}
	}
	r.mu.Lock()
	r.standing[m] = fresh
	r.mu.Unlock()
	return fresh
}
