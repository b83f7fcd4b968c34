package gateway

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// barring is a chain view that also bars one machine (router.Barrer).
type barring struct {
	registry
	barred identity.MachineID
}

func (b barring) Barred(m identity.MachineID) bool { return m == b.barred }

// TestBarredNeverRouted: the provider the gateway would pick is barred
// by the chain (convicted, not re-bonded): from then on no call goes to
// it, not even for a buyer opting in to unregistered providers, and the
// other provider serves every call.
func TestBarredNeverRouted(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 2, testConfig(), answer(ms, "zero"), answer(ms, "one"))
		reg := registry{}
		byPeer := map[peer.ID]identity.MachineID{}
		for _, p := range m.provs {
			reg[p.id], byPeer[p.id] = p.ident.MachineID(), p.ident.MachineID()
		}
		m.table.SetRegistry(reg)
		first := mustRoute(t, m, request())
		chosen, err := peer.Decode(first.Provider.PeerID)
		if err != nil {
			t.Fatal(err)
		}
		m.table.SetRegistry(barring{registry: reg, barred: byPeer[chosen]})
		before := len(m.calls())
		for i := range 4 {
			req := request()
			req.AllowUnregistered = i%2 == 1
			if res := mustRoute(t, m, req); res.Provider.PeerID == first.Provider.PeerID || res.Text == first.Text {
				t.Fatalf("call %d went to the barred provider %s", i, res.Provider.PeerID)
			}
		}
		for _, c := range m.calls()[before:] {
			if c.peer == chosen {
				t.Fatal("the barred provider was called")
			}
		}
	})
}
