package router

import (
	"encoding/hex"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Claimed marks a value the provider states about itself that nothing in
// the network has checked.
type Claimed struct {
	Value   string `json:"value"`
	Claimed bool   `json:"claimed"`
}

// ModelView is one model a provider serves, as listed by the API.
type ModelView struct {
	ModelID      string               `json:"model_id"`
	Name         string               `json:"name,omitempty"`
	Engine       string               `json:"engine,omitempty"`
	WeightsHash  string               `json:"weights_hash,omitempty"`
	RateCard     terms.RateCard       `json:"rate_card"`
	Verification []terms.Verification `json:"verification"`
	State        string               `json:"state"`
}

// ProviderView is one provider as tenzro_listProviders shows it.
type ProviderView struct {
	PeerID         string      `json:"peer_id"`
	MachineID      string      `json:"machine_id"`
	KeyBackend     string      `json:"key_backend"`
	Region         string      `json:"region"`
	HardwareClass  Claimed     `json:"hardware_class"`
	Models         []ModelView `json:"models"`
	Status         Status      `json:"status"`
	LastHeartbeat  int64       `json:"last_heartbeat_ms"`
	HeartbeatAge   int64       `json:"heartbeat_age_ms"`
	InFlight       uint32      `json:"in_flight"`
	Capacity       uint32      `json:"capacity"`
	QueueDepth     uint32      `json:"queue_depth"`
	Source         string      `json:"source"` // "gossip" once announced, else "dht"
	DHTAddrs       []string    `json:"dht_addrs,omitempty"`
	HeartbeatSeq   uint64      `json:"heartbeat_seq"`
	AnnouncedAtMs  int64       `json:"announced_at_ms,omitempty"`
	DiscoveredAtMs int64       `json:"discovered_at_ms"`
	// Registered and StandingBP come from the chain; both are absent
	// when this node runs without one.
	Registered *bool   `json:"registered,omitempty"`
	StandingBP *uint32 `json:"standing_bp,omitempty"`
	// Breaker is this node's circuit breaker for the provider (closed,
	// open, half-open); absent where the node routes nothing to it yet.
	Breaker string `json:"breaker,omitempty"`
	// Attested is set when the provider's announcement carries a verified
	// TEE attestation; absent otherwise.
	Attested *AttestedView `json:"attested,omitempty"`
}

// AttestedView is a verified TEE attestation as the API shows it.
type AttestedView struct {
	Kind        string `json:"kind"`         // "sev-snp"
	Signer      string `json:"signer"`       // VCEK or VLEK
	ProductLine string `json:"product_line"` // e.g. Milan
	Measurement string `json:"measurement"`  // hex launch measurement
}

func attestedView(r *attest.Result) *AttestedView {
	if r == nil {
		return nil
	}
	return &AttestedView{Kind: r.Kind, Signer: r.Signer, ProductLine: r.ProductLine, Measurement: r.MeasurementHex()}
}

// List returns every known provider, sorted by peer ID.
func (t *Table) List() []ProviderView {
	t.mu.RLock()
	now := t.clock.Now()
	entries := sortedEntries(t.providers)
	out := make([]ProviderView, 0, len(entries))
	keys := make([]entry, 0, len(entries))
	for _, e := range entries {
		out = append(out, t.view(e, now))
		keys = append(keys, entry{peer: e.peer, machine: e.machine, announce: e.announce, heartbeat: e.heartbeat})
	}
	t.mu.RUnlock()
	for i := range out {
		t.annotate(&out[i], &keys[i])
	}
	return out
}

// annotate adds what the chain says of a provider whose machine is known
// (e is a copy taken under the lock).
func (t *Table) annotate(v *ProviderView, e *entry) {
	if e.announce == nil && e.heartbeat == nil {
		return
	}
	v.Registered, v.StandingBP = t.chainView(e.peer, e.machine)
}

// Get returns one provider's view.
func (t *Table) Get(p peer.ID) (ProviderView, bool) {
	t.mu.RLock()
	e, ok := t.providers[p]
	var (
		v   ProviderView
		key entry
	)
	if ok {
		v = t.view(e, t.clock.Now())
		key = entry{peer: e.peer, machine: e.machine, announce: e.announce, heartbeat: e.heartbeat}
	}
	t.mu.RUnlock()
	if ok {
		t.annotate(&v, &key)
	}
	return v, ok
}

func (t *Table) view(e *entry, now time.Time) ProviderView {
	v := ProviderView{
		PeerID:         e.peer.String(),
		Status:         t.status(e, now),
		Source:         "dht",
		DHTAddrs:       e.dhtAddrs,
		DiscoveredAtMs: e.discovered.UnixMilli(),
		Models:         []ModelView{},
	}
	if e.announce != nil || e.heartbeat != nil {
		v.MachineID = e.machine.String()
		v.KeyBackend = e.backend
	}
	states := map[string]string{}
	if hb := e.heartbeat; hb != nil {
		v.LastHeartbeat = e.lastBeat.UnixMilli()
		v.HeartbeatAge = now.Sub(e.lastBeat).Milliseconds()
		v.InFlight, v.Capacity, v.QueueDepth = hb.InFlight, hb.Capacity, hb.QueueDepth
		v.HeartbeatSeq = hb.Seq
		for _, m := range hb.Models {
			states[hex.EncodeToString(m.ModelID)] = string(m.State)
		}
	}
	if an := e.announce; an != nil {
		v.Source = "gossip"
		v.Region = an.Region
		v.HardwareClass = Claimed{Value: an.HardwareClass, Claimed: true}
		v.AnnouncedAtMs = an.TimeMs
		v.Attested = attestedView(e.attested)
		for _, m := range an.Models {
			id := hex.EncodeToString(m.ModelID)
			st := states[id]
			if st == "" {
				st = "unknown"
			}
			v.Models = append(v.Models, ModelView{ModelID: id, Name: m.Name, Engine: m.Engine,
				WeightsHash: hex.EncodeToString(m.WeightsHash), RateCard: m.RateCard,
				Verification: m.Verification, State: st})
		}
		return v
	}
	for id := range e.dhtModels {
		v.Models = append(v.Models, ModelView{ModelID: id, State: "unknown", Verification: []terms.Verification{}})
	}
	return v
}
