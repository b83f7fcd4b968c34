package gossip

import (
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Pins maps a provider's libp2p peer ID to the machine ID its messages must
// chain to. Without a chain, FirstSeenPins pins the first valid
// announcement of each peer; with one, RegistryPins pins each peer to its
// on-chain registration.
type Pins interface {
	// Lookup returns the machine pinned for p, if any.
	Lookup(p peer.ID) (identity.MachineID, bool)
	// Offer proposes m for p after an otherwise valid announcement. It
	// returns the machine now pinned, which differs from m when another
	// machine was pinned first.
	Offer(p peer.ID, m identity.MachineID) identity.MachineID
}

// FirstSeenPins pins the first machine ID announced for each peer.
type FirstSeenPins struct {
	mu   sync.RWMutex
	pins map[peer.ID]identity.MachineID
}

// NewFirstSeenPins returns an empty pin store.
func NewFirstSeenPins() *FirstSeenPins {
	return &FirstSeenPins{pins: make(map[peer.ID]identity.MachineID)}
}

func (f *FirstSeenPins) Lookup(p peer.ID) (identity.MachineID, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	m, ok := f.pins[p]
	return m, ok
}

func (f *FirstSeenPins) Offer(p peer.ID, m identity.MachineID) identity.MachineID {
	f.mu.Lock()
	defer f.mu.Unlock()
	if got, ok := f.pins[p]; ok {
		return got
	}
	f.pins[p] = m
	return m
}
