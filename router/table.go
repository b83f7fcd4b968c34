package router

import (
	"encoding/hex"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Protocol constants (DESIGN.md, Gossip topics).
const (
	HeartbeatInterval = 2 * time.Second
	DownAfter         = 3 * HeartbeatInterval
)

// Status of a provider as the failure detector sees it.
type Status string

const (
	StatusUp       Status = "up"
	StatusDown     Status = "down"
	StatusDegraded Status = "degraded"
)

// Table is the set of known providers.
type Table struct {
	clock     clock.Clock
	downAfter time.Duration
	log       *slog.Logger

	registry Registry // nil without a chain

	mu        sync.RWMutex
	providers map[peer.ID]*entry
	models    modelIndex         // announced entries by model ID and name
	lastSeen  map[peer.ID]Status // status at the last sweep, for transition logs
}

type entry struct {
	peer       peer.ID
	machine    identity.MachineID
	backend    string
	announce   *gossip.Announcement
	attested   *attest.Result // what the latest announcement's attestation proved; nil without one
	heartbeat  *gossip.Heartbeat
	lastBeat   time.Time // receipt time of the latest accepted heartbeat
	lastClean  time.Time // receipt time of the latest non-degraded heartbeat
	dhtModels  map[string]bool
	dhtAddrs   []string
	discovered time.Time
	// suspected is when p's last libp2p connection closed; zero when it
	// is not suspected (see Suspect).
	suspected time.Time
}

// NewTable returns an empty table. A nil clock means the wall clock.
func NewTable(clk clock.Clock, log *slog.Logger) *Table {
	if clk == nil {
		clk = clock.New()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Table{clock: clk, downAfter: DownAfter, log: log.With("component", "providers"),
		providers: make(map[peer.ID]*entry), models: newModelIndex(), lastSeen: make(map[peer.ID]Status)}
}

// Registry is what the chain says of providers.
type Registry interface {
	// Registered returns the machine registered for p, false when none is.
	Registered(p peer.ID) (identity.MachineID, bool)
	// StandingBP returns m's standing in basis points, false when unknown.
	StandingBP(m identity.MachineID) (uint32, bool)
}

// Barrer is what a Registry may also say: whether the chain bars machine
// m (a conviction not yet answered by a re-bond). A registry without it
// bars nothing.
type Barrer interface {
	Barred(m identity.MachineID) bool
}

// barred asks the registry whether m is barred.
func (t *Table) barred(m identity.MachineID) bool {
	b, ok := t.registry.(Barrer)
	return ok && b.Barred(m)
}

// SetRegistry makes the table mark providers registered or not and carry
// their standing. Call it before the table is used.
func (t *Table) SetRegistry(r Registry) { t.registry = r }

// chainView is what the registry says of peer p announcing machine m: nil,
// nil without a registry.
func (t *Table) chainView(p peer.ID, m identity.MachineID) (registered *bool, standing *uint32) {
	if t.registry == nil {
		return nil, nil
	}
	rm, ok := t.registry.Registered(p)
	ok = ok && rm == m
	registered = &ok
	if ok {
		if bp, known := t.registry.StandingBP(m); known {
			standing = &bp
		}
	}
	return registered, standing
}

func (t *Table) get(p peer.ID) *entry {
	e, ok := t.providers[p]
	if !ok {
		e = &entry{peer: p, discovered: t.clock.Now()}
		t.providers[p] = e
	}
	return e
}

// ApplyAnnouncement records a verified announcement.
func (t *Table) ApplyAnnouncement(a *gossip.VerifiedAnnouncement) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.get(a.Peer)
	if e.announce != nil && e.machine != a.Machine {
		e.heartbeat, e.lastBeat, e.lastClean = nil, time.Time{}, time.Time{}
	}
	e.machine, e.backend = a.Machine, a.Backend
	an := a.Announcement
	t.models.update(e, e.announce, &an)
	e.announce, e.attested = &an, a.Attested
}

// ApplyHeartbeat records a verified heartbeat. A heartbeat is clean when it
// does not say degraded; only clean heartbeats keep a provider up.
func (t *Table) ApplyHeartbeat(h *gossip.VerifiedHeartbeat) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.get(h.Peer)
	if e.heartbeat != nil && h.Seq <= e.heartbeat.Seq && e.machine == h.Machine {
		return
	}
	e.machine, e.backend = h.Machine, h.Backend
	hb := h.Heartbeat
	e.heartbeat = &hb
	e.lastBeat = h.Received
	if !hb.Degraded {
		e.lastClean = h.Received
	}
}

// AddDHTProvider records a peer the DHT says provides modelID, for a model
// gossip has not yet shown this node.
func (t *Table) AddDHTProvider(ai peer.AddrInfo, modelID [32]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.get(ai.ID)
	if e.dhtModels == nil {
		e.dhtModels = make(map[string]bool)
	}
	e.dhtModels[hex.EncodeToString(modelID[:])] = true
	e.dhtAddrs = e.dhtAddrs[:0]
	for _, a := range ai.Addrs {
		e.dhtAddrs = append(e.dhtAddrs, a.String())
	}
}

func (t *Table) status(e *entry, now time.Time) Status {
	switch {
	case e.heartbeat == nil || now.Sub(e.lastBeat) > t.downAfter:
		return StatusDown
	case e.heartbeat.Degraded:
		return StatusDegraded
	case now.Sub(e.lastClean) > t.downAfter:
		return StatusDown
	default:
		return StatusUp
	}
}

// Status returns the current status of p (down if unknown).
func (t *Table) Status(p peer.ID) Status {
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.providers[p]
	if !ok {
		return StatusDown
	}
	return t.status(e, t.clock.Now())
}

// Sweep logs status transitions since the previous sweep and returns them.
// The node calls it on a short ticker so operators see a provider go down
// when it happens, not only when someone lists providers.
func (t *Table) Sweep() map[peer.ID]Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	changed := map[peer.ID]Status{}
	for p, e := range t.providers {
		s := t.status(e, now)
		if prev, ok := t.lastSeen[p]; !ok && s == StatusDown || ok && prev == s {
			t.lastSeen[p] = s
			continue
		}
		t.lastSeen[p] = s
		changed[p] = s
		t.log.Info("provider status", "peer", p, "machine", e.machine, "status", s,
			"since_heartbeat", now.Sub(e.lastBeat).Round(time.Millisecond))
	}
	return changed
}

// Len returns the number of known providers.
func (t *Table) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.providers)
}

func sortedEntries(m map[peer.ID]*entry) []*entry {
	out := make([]*entry, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].peer < out[j].peer })
	return out
}
