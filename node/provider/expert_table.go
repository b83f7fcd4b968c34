package provider

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// expertTable is a serving provider's view of the expert holders: every
// verified announcement's expert offers, each under the machine the
// announcement's signature chained to (the pinned one), standing for ttl.
type expertTable struct {
	self  peer.ID
	ttl   time.Duration
	clock clock.Clock
	// barred, when set (on chain), leaves out holders a conviction bars.
	barred func(identity.MachineID) bool

	mu      sync.RWMutex
	holders map[peer.ID]*heldBy
}

type heldBy struct {
	machine identity.MachineID
	session []byte // the announcing session's public key: new at each start
	offers  []gossip.ExpertOffer
	seen    time.Time
}

func newExpertTable(self peer.ID, ttl time.Duration, clk clock.Clock) *expertTable {
	return &expertTable{self: self, ttl: ttl, clock: clk, holders: map[peer.ID]*heldBy{}}
}

// apply records a verified announcement: its expert offers replace the
// peer's earlier ones (none: the peer holds nothing any more). restarted
// reports a holder known before announcing under a new session: it
// restarted (or renewed its session certificate).
func (t *expertTable) apply(a *gossip.VerifiedAnnouncement) (restarted bool) {
	if a.Peer == t.self {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	prev := t.holders[a.Peer]
	if len(a.Experts) == 0 {
		delete(t.holders, a.Peer)
		return false
	}
	t.holders[a.Peer] = &heldBy{machine: a.Machine, session: slices.Clone(a.Cert.SessionPub), offers: slices.Clone(a.Experts), seen: t.clock.Now()}
	return prev != nil && !bytes.Equal(prev.session, a.Cert.SessionPub)
}

// Holders implements expert.Table: the holders of expert e of layer l
// that the chain does not bar, in rendezvous order of (peer, model, layer, expert), so that each of N
// holders of a set of experts is first choice for about 1/N of them and
// every serving node agrees on the order.
func (t *expertTable) Holders(model [32]byte, layer, e int) []expert.Holder {
	if layer < 0 || e < 0 {
		return nil
	}
	now := t.clock.Now()
	type ranked struct {
		h    expert.Holder
		rank [32]byte
	}
	var out []ranked
	t.mu.RLock()
	for p, hb := range t.holders {
		if now.Sub(hb.seen) > t.ttl {
			continue
		}
		for i := range hb.offers {
			o := &hb.offers[i]
			if bytes.Equal(o.ModelID, model[:]) && o.Holds(uint32(layer), uint32(e)) {
				out = append(out, ranked{expert.Holder{Peer: p, Machine: hb.machine, Price: o.PricePerToken}, rendezvous(p, model, layer, e)})
				break
			}
		}
	}
	t.mu.RUnlock()
	if t.barred != nil {
		out = slices.DeleteFunc(out, func(r ranked) bool { return t.barred(r.h.Machine) })
	}
	slices.SortFunc(out, func(a, b ranked) int { return bytes.Compare(a.rank[:], b.rank[:]) })
	hs := make([]expert.Holder, len(out))
	for i, r := range out {
		hs[i] = r.h
	}
	return hs
}

func rendezvous(p peer.ID, model [32]byte, layer, e int) [32]byte {
	b := make([]byte, 0, len(p)+40)
	b = append(b, p...)
	b = append(b, model[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(layer))
	b = binary.BigEndian.AppendUint32(b, uint32(e))
	return sha256.Sum256(b)
}
