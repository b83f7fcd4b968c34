package routertest

import (
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Registry is the chain's registry as the router reads it
// (router.Registry): the machine each peer is registered to and each
// machine's standing in basis points. Its maps are shared by its copies,
// so a test changes what a table it was given sees.
type Registry struct {
	Machines map[peer.ID]identity.MachineID
	Standing map[identity.MachineID]uint32
}

// NewRegistry returns an empty registry.
func NewRegistry() Registry {
	return Registry{Machines: map[peer.ID]identity.MachineID{}, Standing: map[identity.MachineID]uint32{}}
}

// Registered returns the machine p is registered to.
func (r Registry) Registered(p peer.ID) (identity.MachineID, bool) {
	m, ok := r.Machines[p]
	return m, ok
}

// StandingBP returns m's standing.
func (r Registry) StandingBP(m identity.MachineID) (uint32, bool) {
	bp, ok := r.Standing[m]
	return bp, ok
}
