package router

import (
	"encoding/hex"
	"slices"
	"sort"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Offer is one provider's offer of one model, with its live state.
type Offer struct {
	Peer       peer.ID
	Machine    identity.MachineID
	Backend    string
	Region     string
	Model      gossip.ModelOffer
	State      gossip.ModelState // from the latest heartbeat; "" if none
	Status     Status
	InFlight   uint32
	Capacity   uint32
	QueueDepth uint32
	// Unregistered is set when the chain is on and the peer is not
	// registered to the machine it announced.
	Unregistered bool
	// Barred is set when the chain bars the machine: convicted in a
	// dispute and not re-bonded since. No gateway routes to it or quotes
	// it, whatever the model: the chain would not pay it.
	Barred bool
	// Standing is the consensus standing in basis points (0 when
	// unregistered); StandingKnown is false without a chain.
	Standing      uint32
	StandingKnown bool
	// Standby is the provider's offer to stand by as a session successor
	// (fee per hour, HPKE key), from its announcement; nil when it makes
	// none.
	Standby *gossip.StandbyOffer
	// Attested is what the provider's announced TEE attestation proved
	// (verified by the gossip validator); nil when it carries none.
	Attested *attest.Result
	// NoRetention is the provider's signed claim, in its announcement,
	// that it retains no prompts: a claim, not a proof.
	NoRetention bool
}

// Serves reports whether the offer includes verification level. `tee` is
// served only with a verified attestation: announcing the level is a claim,
// the attestation the evidence.
func (o Offer) Serves(level terms.Verification) bool {
	if level == terms.VerifyTEE && o.Attested == nil {
		return false
	}
	return o.Model.Serves(level)
}

// Offers returns every announced offer of model (a name or a hex catalog
// ID), sorted by peer ID.
func (t *Table) Offers(model string) []Offer {
	out := t.offers(model)
	for i := range out {
		reg, st := t.chainView(out[i].Peer, out[i].Machine)
		out[i].Unregistered = reg != nil && !*reg
		out[i].Barred = !out[i].Unregistered && t.barred(out[i].Machine)
		if out[i].Unregistered {
			out[i].StandingKnown = true // no serving bond: standing 0
		} else if st != nil {
			out[i].Standing, out[i].StandingKnown = *st, true
		}
	}
	return out
}

func (t *Table) offers(model string) []Offer {
	t.mu.RLock()
	defer t.mu.RUnlock()
	now := t.clock.Now()
	id, isID := catalogID(model)
	var out []Offer
	for _, e := range t.models.lookup(model) {
		for _, m := range e.announce.Models {
			if m.Name != model && (!isID || string(m.ModelID) != string(id[:])) {
				continue
			}
			o := Offer{Peer: e.peer, Machine: e.machine, Backend: e.backend, Region: e.announce.Region, Model: m, Status: t.status(e, now),
				Standby: e.announce.Standby, Attested: e.attested, NoRetention: e.announce.NoRetention}
			if hb := e.heartbeat; hb != nil {
				o.InFlight, o.Capacity, o.QueueDepth = hb.InFlight, hb.Capacity, hb.QueueDepth
				for _, s := range hb.Models {
					if string(s.ModelID) == string(m.ModelID) {
						o.State = s.State
					}
				}
			}
			out = append(out, o)
		}
	}
	return out
}

// ModelSummary is one model known to the network.
type ModelSummary struct {
	Name      string
	ID        string
	Names     []string // every name the ID is announced under, sorted
	Providers int      // providers up with the model warm
}

// Models lists the models announced by providers, by name.
func (t *Table) Models() []ModelSummary {
	t.mu.RLock()
	defer t.mu.RUnlock()
	now := t.clock.Now()
	byID := map[string]*ModelSummary{}
	for _, e := range t.providers {
		if e.announce == nil {
			continue
		}
		up := t.status(e, now) == StatusUp
		for _, m := range e.announce.Models {
			id := hex.EncodeToString(m.ModelID)
			s, ok := byID[id]
			if !ok {
				s = &ModelSummary{Name: m.Name, ID: id}
				byID[id] = s
			}
			if m.Name != "" && !slices.Contains(s.Names, m.Name) {
				s.Names = append(s.Names, m.Name)
				slices.Sort(s.Names)
			}
			if up && e.heartbeat != nil {
				for _, st := range e.heartbeat.Models {
					if string(st.ModelID) == string(m.ModelID) && st.State == gossip.StateWarm {
						s.Providers++
					}
				}
			}
		}
	}
	out := make([]ModelSummary, 0, len(byID))
	for _, s := range byID {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || out[i].Name == out[j].Name && out[i].ID < out[j].ID
	})
	return out
}
