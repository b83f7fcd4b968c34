package gossip

import (
	"context"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Registry answers which machine a peer ID is registered to (the consensus
// state's provider registrations).
type Registry interface {
	// MachineOf returns the machine registered for p; false when p is not
	// registered. An error means the registry could not be asked.
	MachineOf(ctx context.Context, p peer.ID) (identity.MachineID, bool, error)
}

// Cache lifetimes of RegistryPins: a registration is re-read after
// registeredTTL (it may have been withdrawn), an absence after
// unregisteredTTL (the peer may register any block).
const (
	registeredTTL   = 30 * time.Second
	unregisteredTTL = 2 * time.Second
	registryTimeout = 2 * time.Second
)

// RegistryPins pins each peer to the machine registered for it on chain.
// A peer that is not registered is still pinned, first-seen, so its
// messages cannot switch machines, and Registered reports it as such.
type RegistryPins struct {
	reg      Registry
	clock    clock.Clock
	fallback *FirstSeenPins

	mu    sync.Mutex
	cache map[peer.ID]registration
}

type registration struct {
	machine    identity.MachineID
	registered bool
	until      time.Time
}

// NewRegistryPins returns pins backed by reg. A nil clock means the wall
// clock.
func NewRegistryPins(reg Registry, clk clock.Clock) *RegistryPins {
	if clk == nil {
		clk = clock.New()
	}
	return &RegistryPins{reg: reg, clock: clk, fallback: NewFirstSeenPins(), cache: map[peer.ID]registration{}}
}

// Registered returns the machine registered for p and whether p is
// registered. It reads the registry on a cache miss; when the registry
// cannot answer, p counts as unregistered and the answer is not cached.
func (r *RegistryPins) Registered(p peer.ID) (identity.MachineID, bool) {
	now := r.clock.Now()
	r.mu.Lock()
	c, ok := r.cache[p]
	r.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.machine, c.registered
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	m, reg, err := r.reg.MachineOf(ctx, p)
	if err != nil {
		return identity.MachineID{}, false
	}
	ttl := unregisteredTTL
	if reg {
		ttl = registeredTTL
	}
	r.mu.Lock()
	r.cache[p] = registration{machine: m, registered: reg, until: now.Add(ttl)}
	r.mu.Unlock()
	return m, reg
}

// Forget drops the cached registration of p, so the next lookup reads the
// registry (e.g. after this node registered p itself).
func (r *RegistryPins) Forget(p peer.ID) {
	r.mu.Lock()
	delete(r.cache, p)
	r.mu.Unlock()
}

// Lookup returns the registered machine of p, else its first-seen pin.
func (r *RegistryPins) Lookup(p peer.ID) (identity.MachineID, bool) {
	if m, ok := r.Registered(p); ok {
		return m, true
	}
	return r.fallback.Lookup(p)
}

// Offer returns the registered machine of p; for an unregistered peer it
// pins m first-seen.
func (r *RegistryPins) Offer(p peer.ID, m identity.MachineID) identity.MachineID {
	if got, ok := r.Registered(p); ok {
		return got
	}
	return r.fallback.Offer(p, m)
}
