package provider

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// barChain is a chain view of registered machines, counting its reads.
type barChain struct {
	provs map[identity.MachineID]ledger.Provider
	err   error
	reads int
}

func (c *barChain) Provider(_ context.Context, m identity.MachineID) (ledger.Provider, bool, error) {
	c.reads++
	p, ok := c.provs[m]
	return p, ok, c.err
}

// TestExpertTableLeavesOutBarred: a holder the chain bars (convicted,
// not re-bonded) is left out of every expert's holders from the block
// that shows the bar, and back once a later block shows the re-bond; each
// machine is read once per block; a chain that cannot answer keeps the
// last answer rather than emptying or refilling the rotation.
func TestExpertTableLeavesOutBarred(t *testing.T) {
	liar, honest := identity.MachineID{1}, identity.MachineID{2}
	chain := &barChain{provs: map[identity.MachineID]ledger.Provider{liar: {MachineID: liar}, honest: {MachineID: honest}}}
	height := int64(10)
	tbl := newExpertTable("self", time.Minute, clock.NewMock())
	tbl.barred = newBarredView(chain, func() int64 { return height }).barred
	model := [32]byte{9}
	for i, m := range []identity.MachineID{liar, honest} {
		tbl.apply(&gossip.VerifiedAnnouncement{Sender: gossip.Sender{Peer: []peer.ID{"holder-liar", "holder-honest"}[i], Machine: m},
			Announcement: gossip.Announcement{Experts: []gossip.ExpertOffer{{ModelID: model[:], Layers: []uint32{0}, Experts: []uint32{0, 1}}}}})
	}
	holders := func() []identity.MachineID {
		var out []identity.MachineID
		for e := range 2 {
			for _, h := range tbl.Holders(model, 0, e) {
				if e == 0 {
					out = append(out, h.Machine)
				}
			}
		}
		return out
	}
	if hs := holders(); len(hs) != 2 {
		t.Fatalf("before any conviction: %v", hs)
	}
	if chain.reads != 2 {
		t.Fatalf("%d chain reads for two machines over two lookups in one block, want 2", chain.reads)
	}
	chain.provs[liar] = ledger.Provider{MachineID: liar, Barred: true}
	if hs := holders(); len(hs) != 2 {
		t.Fatalf("the bar seen before its block: %v", hs)
	}
	height++
	if hs := holders(); len(hs) != 1 || hs[0] != honest {
		t.Fatalf("after the conviction's block: %v, want only the honest holder", hs)
	}
	chain.err, height = errors.New("chain unreachable"), height+1
	if hs := holders(); len(hs) != 1 {
		t.Fatalf("a chain that cannot answer readmitted the barred holder: %v", hs)
	}
	chain.err, height = nil, height+1
	chain.provs[liar] = ledger.Provider{MachineID: liar}
	if hs := holders(); len(hs) != 2 {
		t.Fatalf("after the re-bond's block: %v", hs)
	}
}
