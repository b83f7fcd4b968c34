package node

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// standBy makes a provider offer standby at fee micro-units an hour
// ([provider.standby] of the provider side).
func standBy(cfg *Config, fee uint64) {
	cfg.Provider.Standby.Enabled, cfg.Provider.Standby.FeePerHour = true, fee
}

// acceptancePost is one turn that must be answered.
func acceptancePost(t *testing.T, gw *Node, history []inference.Message, tenzro any, sessionID string) sessionAnswer {
	t.Helper()
	a := sessionTurn(t, gw, history, tenzro, sessionID)
	if a.status != http.StatusOK {
		t.Fatalf("status %d (%s), text %q", a.status, a.code, a.text)
	}
	return a
}

// TestSessionAcceptance is issue #12's multi-node acceptance: a 5-turn
// session with continuity over three standby providers; after turn 3 the
// primary's node stops; turn 4 is served by the successor from its warm
// state (cached_tokens covers the history through turn 3) with the answer
// an uninterrupted engine gives for that history and seed, the gateway
// says served_by successor, and turn 5 has a fresh successor.
func TestSessionAcceptance(t *testing.T) {
	dir, id := testModelDir(t)
	net := nodetest.Build(t, nodetest.Spec{Gateways: 1, Providers: 3}, func(t testing.TB, r nodetest.Role, i int, boot []string) *Node {
		cfg := testConfig(t, Role(r), "software", boot)
		if r == nodetest.RoleGateway {
			cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
		} else {
			cfg.Provider.Models = []ModelConfig{DevnetModel(dir, id)}
			standBy(&cfg, uint64(10+i))
		}
		return newNode(t, cfg)
	})
	gw, ps := net.Gateways[0], net.Providers
	nodetest.Eventually(t, 30*time.Second, "providers warm and standing by at the gateway", func() bool {
		n := 0
		for _, o := range gw.Table().Offers(DevnetModelName) {
			if o.Status == router.StatusUp && o.State == gossip.StateWarm && o.Standby != nil {
				n++
			}
		}
		return n == 3
	})
	history := []inference.Message{{Role: "user", Content: "Tell me a long story about rivers and the sea"}}
	var sid, primary, successor string
	var third sessionAnswer
	for turn := uint32(1); turn <= 3; turn++ {
		var tz any = map[string]any{"session": map[string]any{"continuity": "required"}}
		if turn > 1 {
			tz = nil
		}
		a := acceptancePost(t, gw, history, tz, sid)
		s := a.session
		if s == nil || s.Successor == nil || s.ServedBy != gateway.ServedByPrimary {
			t.Fatalf("turn %d: %+v", turn, s)
		}
		if turn == 1 {
			sid, primary, successor = s.ID, s.Primary.Peer, s.Successor.Peer
		}
		if s.Primary.Peer != primary || s.Successor.Peer != successor || successor == primary {
			t.Fatalf("turn %d moved: %+v", turn, s)
		}
		third = a
		history = append(history, inference.Message{Role: "assistant", Content: a.text}, inference.Message{Role: "user", Content: "Go on."})
	}
	// The primary seals turn 3 to the successor in the background after
	// its final frame: the primary is lost only once the successor holds
	// it, or the loss would race the send (turn 4 then reuses turn 2).
	for _, p := range ps {
		if p.host.ID().String() == successor {
			nodetest.Eventually(t, 20*time.Second, "the successor to hold turn 3", func() bool {
				h, ok := p.Provider().HeldSession(sid)
				return ok && h.Turn >= 3
			})
		}
	}
	for _, p := range ps {
		if p.host.ID().String() == primary {
			if err := p.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	four := acceptancePost(t, gw, history, nil, sid)
	s := four.session
	if s == nil || s.ServedBy != gateway.ServedBySuccessor || s.Primary.Peer != successor || four.peer != successor || s.Turn != 4 {
		t.Fatalf("turn 4: %+v served by %s, want the successor %s", s, four.peer, successor)
	}
	// Warm, not cold: the successor reused the conversation it held, at
	// least turn 3's whole prompt (a cold successor reports 0), and
	// prefilled the new message (prompt_tokens counts the cached ones).
	if four.cached < third.prompt || four.cached == 0 || four.cached >= four.prompt {
		t.Fatalf("turn 4 cached_tokens %d (prompt %d); turn 3's prompt was %d tokens", four.cached, four.prompt, third.prompt)
	}
	cold := acceptancePost(t, gw, history, map[string]any{"provider": successor}, "")
	if cold.text != four.text {
		t.Fatalf("turn 4 answered %q; the engine uninterrupted answers %q", four.text, cold.text)
	}
	history = append(history, inference.Message{Role: "assistant", Content: four.text}, inference.Message{Role: "user", Content: "The end?"})
	five := acceptancePost(t, gw, history, nil, sid)
	f := five.session
	if f == nil || f.ServedBy != gateway.ServedByPrimary || f.Primary.Peer != successor || f.Successor == nil ||
		f.Successor.Peer == primary || f.Successor.Peer == successor {
		t.Fatalf("turn 5: %+v, want a fresh successor", f)
	}
}
