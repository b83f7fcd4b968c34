package gossip

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// fakeRegistry is an in-memory chain registry counting its reads.
type fakeRegistry struct {
	mu    sync.Mutex
	reg   map[peer.ID]identity.MachineID
	reads int
	down  bool
}

func (f *fakeRegistry) MachineOf(_ context.Context, p peer.ID) (identity.MachineID, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.down {
		return identity.MachineID{}, false, errors.New("chain down")
	}
	m, ok := f.reg[p]
	return m, ok, nil
}

func (f *fakeRegistry) set(p peer.ID, m identity.MachineID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reg[p] = m
}

func registryValidator(now time.Time) (*Validator, *RegistryPins, *fakeRegistry, *clock.Mock) {
	clk := clock.NewMock()
	clk.Set(now)
	reg := &fakeRegistry{reg: map[peer.ID]identity.MachineID{}}
	pins := NewRegistryPins(reg, clk)
	return NewValidator("test", 0, clk, pins), pins, reg, clk
}

// TestRegistryPinsPinToTheChain: a registered peer is pinned to the
// machine on chain, even against an earlier first-seen announcement of
// another machine, and another machine's messages for it are ignored.
func TestRegistryPinsPinToTheChain(t *testing.T) {
	now := time.Now()
	v, pins, reg, clk := registryValidator(now)
	p := newTestProvider(t, now)
	// The attacker holds p's libp2p key and announces its own machine
	// before p registers: accepted, but unregistered.
	forger := newForger(t, p, now)
	wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, forger.seal(t, KindAnnounce, forger.announcement(now))), Accept, ReasonOK)
	if _, ok := pins.Registered(p.peer); ok {
		t.Fatal("unregistered peer reported registered")
	}
	if m, ok := pins.Lookup(p.peer); !ok || m != forger.id.MachineID() {
		t.Fatalf("unregistered peer not pinned first-seen: %s %v", m, ok)
	}

	reg.set(p.peer, p.id.MachineID())
	clk.Add(unregisteredTTL + time.Millisecond) // the absence expires from the cache
	now = clk.Now()
	if m, ok := pins.Registered(p.peer); !ok || m != p.id.MachineID() {
		t.Fatalf("Registered = %s %v, want %s", m, ok, p.id.MachineID())
	}
	wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, p.seal(t, KindAnnounce, p.announcement(now))), Accept, ReasonOK)
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, p.seal(t, KindHeartbeat, p.heartbeat(now))), Accept, ReasonOK)
	// Ignored, not rejected: the registration is this node's chain view,
	// and a relay that has not seen it yet forwarded in good faith.
	wantVerdict(t, v.ValidateAnnouncement(tctx, testRelay, forger.seal(t, KindAnnounce, forger.announcement(now))), Ignore, ReasonPinMismatch)
	wantVerdict(t, v.ValidateHeartbeat(tctx, testRelay, forger.seal(t, KindHeartbeat, forger.heartbeat(now))), Ignore, ReasonPinMismatch)
}

// TestRegistryPinsCache: answers are cached (a registration longer than an
// absence), and a registry error is neither cached nor taken as a pin.
func TestRegistryPinsCache(t *testing.T) {
	now := time.Now()
	_, pins, reg, clk := registryValidator(now)
	p := newTestProvider(t, now)
	reg.set(p.peer, p.id.MachineID())
	for range 5 {
		pins.Lookup(p.peer)
	}
	if reg.reads != 1 {
		t.Fatalf("%d registry reads for 5 lookups within the TTL, want 1", reg.reads)
	}
	clk.Add(registeredTTL + time.Millisecond)
	pins.Lookup(p.peer)
	if reg.reads != 2 {
		t.Fatalf("%d registry reads after the TTL, want 2", reg.reads)
	}

	q := newTestProvider(t, now)
	reg.down = true
	if _, ok := pins.Lookup(q.peer); ok {
		t.Fatal("a peer nobody pinned is pinned while the registry is down")
	}
	reg.down = false
	reg.set(q.peer, q.id.MachineID())
	if m, ok := pins.Lookup(q.peer); !ok || m != q.id.MachineID() {
		t.Fatalf("registry error was cached: %s %v", m, ok)
	}
	pins.Forget(q.peer)
	before := reg.reads
	pins.Lookup(q.peer)
	if reg.reads != before+1 {
		t.Fatal("Forget did not drop the cached registration")
	}
}
