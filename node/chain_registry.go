package node

import (
	"context"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// chainRegistry is what gossip and the provider table read of the chain:
// the machine registered for a peer (gossip.Registry) and, through the
// pins' cache, the router.Registry with standings cached per block.
type chainRegistry struct {
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
}

func newChainRegistry(chain *consensus.Node, n *Node) *chainRegistry {
	r := &chainRegistry{chain: chain, standing: map[identity.MachineID]cachedStanding{}, providers: map[identity.MachineID]providerAt{}}
	r.pins = gossip.NewRegistryPins(r, n.clock)
	return r
}

// MachineOf reads the registration of p from the chain.
func (r *chainRegistry) MachineOf(ctx context.Context, p peer.ID) (identity.MachineID, bool, error) {
	return r.chain.ProviderByPeer(ctx, p.String())
}

// Registered is the pins' cached answer.
func (r *chainRegistry) Registered(p peer.ID) (identity.MachineID, bool) { return r.pins.Registered(p) }

// StandingBP reads m's standing, once per committed block.
func (r *chainRegistry) StandingBP(m identity.MachineID) (uint32, bool) {
	h := r.chain.App().Height()
	r.mu.Lock()
	c, hit := r.standing[m]
	r.mu.Unlock()
	if hit && c.height == h {
		return c.bp, c.ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := r.chain.Standing(ctx, m, h)
	c = cachedStanding{height: h}
	if err == nil {
		c.bp, c.ok = uint32(min(st.StandingBP, consensus.BasisPoints)), true
	} else if ctx.Err() != nil || consensus.CodeOf(err) != consensus.CodeUnknownProvider {
		return 0, false // not cached: the chain could not answer
	}
	r.mu.Lock()
	r.standing[m] = c
	r.mu.Unlock()
	return c.bp, c.ok
}
