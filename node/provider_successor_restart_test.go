package node

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
)

// TestSuccessorRestartStaysWarm: a successor restarted from its home
// takes back the session it stood by for and the latest state its primary
// sealed (persisted as received), proves that turn to a challenge, and
// serves the failed-over turn from its cache (cached_tokens = the state).
func TestSuccessorRestartStaysWarm(t *testing.T) {
	primary := startNode(t, testConfig(t, RoleProvider, "software", nil))
	cfg := testConfig(t, RoleProvider, "software", primary.Host().Addrs()[:1])
	cfg.Provider.Standby.Enabled = true
	succ := startNode(t, cfg)
	_, modelHex := testModelDir(t)
	for _, p := range []*Node{primary, succ} {
		nodetest.Eventually(t, 20*time.Second, "model warm", p.Provider().Warm)
	}
	gw := newSessionCaller(t, modelHex, primary, succ)
	const sid = "sess-restart"
	ctx := context.Background()
	pm := primary.id.MachineID()
	if err := sessioncache.Assign(ctx, gw.h, succ.Host().ID(), sessioncache.Assignment{SessionID: sid, ModelID: gw.modelID,
		PrimaryPeer: primary.Host().ID(), PrimaryMachine: pm[:]}); err != nil {
		t.Fatal(err)
	}
	sp := inference.Sampling{Temperature: 0.7, Seed: 11, MaxTokens: 12}
	msgs := []inference.Message{{Role: "system", Content: "You are a patient harbour master."}, {Role: "user", Content: "Which boats came in today?"}}
	for turn := uint32(1); turn <= 2; turn++ {
		text, _ := gw.turn(primary, msgs, sp, successorTurn(sid, turn, succ))
		msgs = append(msgs, inference.Message{Role: "assistant", Content: text},
			inference.Message{Role: "user", Content: "And after that, which one?"})
		nodetest.Eventually(t, 20*time.Second, "successor warm with the turn", func() bool {
			h, ok := succ.Provider().HeldSession(sid)
			return ok && h.Turn == turn && h.Warm
		})
	}
	held, _ := succ.Provider().HeldSession(sid)
	if err := succ.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	again := startNode(t, cfg)
	nodetest.Eventually(t, 60*time.Second, "the restarted successor warm with turn 2", func() bool {
		h, ok := again.Provider().HeldSession(sid)
		return ok && h.Turn == 2 && h.Tokens == held.Tokens && h.Warm
	})
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := gw.h.Connect(cctx, peer.AddrInfo{ID: again.Host().ID(), Addrs: again.Host().Host().Addrs()})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if turn, hash, err := sessioncache.Challenge(ctx, gw.h, again.Host().ID(), sid); err != nil || turn != 2 || len(hash) != sessioncache.HashSize {
		t.Fatalf("challenge of the restarted successor: turn %d, hash %x, %v", turn, hash, err)
	}
	_, units := gw.turn(again, msgs, sp, &infer.SessionTurn{ID: sid, Turn: 3, Failover: true})
	if int(units.CachedTokens) != held.Tokens {
		t.Fatalf("failed-over turn at the restarted successor: cached_tokens %d, want the %d-token state", units.CachedTokens, held.Tokens)
	}
}
