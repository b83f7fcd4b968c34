package gateway

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// registry is the chain's view for these tests: only listed peers are
// registered, to the machine listed.
type registry map[peer.ID]identity.MachineID

func (r registry) Registered(p peer.ID) (identity.MachineID, bool) { m, ok := r[p]; return m, ok }
func (registry) StandingBP(identity.MachineID) (uint32, bool)      { return 9000, true }

// names binds names to IDs, as the chain's records do.
type names map[string][32]byte

func (n names) Resolve(_ context.Context, name string) ([32]byte, bool, error) {
	id, ok := n[name]
	return id, ok, nil
}

func id32(b []byte) (id [32]byte) { copy(id[:], b); return id }

// squatted is a market where provider 1 announces another model, cheaper,
// under provider 0's model name.
func squatted(t *testing.T, st *bubbleLedger, reg bool, nm names) *market {
	m := newMarket(t, st, 2, testConfig(), answer(ms, "honest"), answer(ms, "squatter"))
	m.announce(m.provs[1], 1, otherID, modelName)
	if reg {
		m.table.SetRegistry(registry{m.provs[0].id: m.provs[0].ident.MachineID()})
	}
	if nm != nil {
		m.gw.names = nm
	}
	return m
}

// TestSquatterNeverRouted: with the chain on, an unregistered peer
// announcing another model under a served name, cheaper, gets no call: not
// by name, and not even when the buyer opts in to unregistered providers
// and a record binds the name.
func TestSquatterNeverRouted(t *testing.T) {
	st1, st2 := openStore(t), openStore(t)
	synctest.Test(t, func(t *testing.T) {
		for i, nm := range []names{nil, {modelName: id32(modelID)}} {
			m := squatted(t, []*bubbleLedger{st1, st2}[i], true, nm)
			for range 3 {
				if res := mustRoute(t, m, request()); res.Text != "honest" {
					t.Fatalf("routed to %s", res.Provider.PeerID)
				}
			}
			req := request()
			req.AllowUnregistered = true
			res, _, err := route(t, m, req)
			if nm != nil && (err != nil || res.Text != "honest") {
				t.Fatalf("bound name, opted in: %+v %v", res, err)
			}
			var ge *Error
			if nm == nil && (!errors.As(err, &ge) || ge.Status != http.StatusConflict) {
				t.Fatalf("unbound name, opted in: two IDs must not merge: %v", err)
			}
			for _, c := range m.calls() {
				if c.peer == m.provs[1].id {
					t.Fatal("the squatter was called")
				}
			}
			// By its own ID, opted in, the unregistered provider serves.
			req = request()
			req.Model, req.AllowUnregistered = hex.EncodeToString(otherID), true
			if res := mustRoute(t, m, req); res.Text != "squatter" {
				t.Fatalf("by ID: %q", res.Text)
			}
			req.AllowUnregistered = false
			if _, _, err := route(t, m, req); !errors.As(err, &ge) || ge.Status != http.StatusServiceUnavailable {
				t.Fatalf("unregistered without opting in: %v", err)
			}
			ms := m.gw.Models(context.Background())
			if len(ms) != 2 {
				t.Fatalf("models %+v", ms)
			}
			for _, x := range ms {
				named := len(x.Names) == 1 && x.Names[0] == modelName
				if x.ID == hex.EncodeToString(modelID) != named {
					t.Fatalf("models %+v: the name belongs to the registered ID only", ms)
				}
			}
		}
	})
}

// TestAmbiguousNameAsksForTheID: without a chain or a record, a name two
// IDs are announced under resolves to neither: 409 listing both; each ID
// works by itself.
func TestAmbiguousNameAsksForTheID(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := squatted(t, st, false, nil)
		_, _, err := route(t, m, request())
		var ge *Error
		if !errors.As(err, &ge) || ge.Status != http.StatusConflict || ge.Param != "model" ||
			!strings.Contains(ge.Message, hex.EncodeToString(modelID)) || !strings.Contains(ge.Message, hex.EncodeToString(otherID)) {
			t.Fatalf("ambiguous name: %v", err)
		}
		for _, c := range []struct {
			id   []byte
			want string
		}{{modelID, "honest"}, {otherID, "squatter"}} {
			req := request()
			req.Model = strings.ToUpper(hex.EncodeToString(c.id))
			if res := mustRoute(t, m, req); res.Text != c.want {
				t.Fatalf("by ID %x: %q", c.id[:4], res.Text)
			}
		}
		if len(m.calls()) != 2 {
			t.Fatalf("%d calls", len(m.calls()))
		}
		for _, x := range m.gw.Models(context.Background()) {
			if len(x.Names) != 0 {
				t.Fatalf("an ambiguous name listed: %+v", x)
			}
		}
		req := request()
		req.Model = "nope"
		if _, _, err := route(t, m, req); !errors.As(err, &ge) || ge.Status != http.StatusNotFound {
			t.Fatalf("unknown model: %v", err)
		}
	})
}
