package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// sessionCaller is a bare libp2p host playing the gateway: it assigns
// successors and sends session turns straight over the infer protocol.
type sessionCaller struct {
	t       *testing.T
	h       host.Host
	modelID []byte
}

func newSessionCaller(t *testing.T, modelHex string, providers ...*Node) *sessionCaller {
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	for _, p := range providers {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := h.Connect(ctx, peer.AddrInfo{ID: p.Host().ID(), Addrs: p.Host().Host().Addrs()})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	id, _ := hex.DecodeString(modelHex)
	return &sessionCaller{t: t, h: h, modelID: id}
}

// turn sends one session turn to p and returns the text and the receipt's
// units, verified against p's machine.
func (c *sessionCaller) turn(p *Node, msgs []inference.Message, sp inference.Sampling, st *infer.SessionTurn) (string, terms.Units) {
	c.t.Helper()
	nonce := make([]byte, infer.NonceSize)
	_, _ = rand.Read(nonce)
	req := &infer.Request{Nonce: nonce, ModelID: c.modelID, Chat: true, Messages: msgs, Sampling: sp,
		Verification: terms.VerifyReceipt, Session: st}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var text string
	f, _, err := infer.Call(ctx, c.h, p.Host().ID(), req, infer.ClientConfig{Network: "test"}, func(tf *infer.TokenFrame) error {
		text += tf.Text
		return nil
	})
	if err != nil {
		c.t.Fatalf("turn %d at %s: %v", st.Turn, p.Host().ID(), err)
	}
	r, err := receipt.Verify(f.Receipt, p.id.MachineID(), time.Now())
	if err != nil {
		c.t.Fatal(err)
	}
	if int(r.Units.InputTokens+r.Units.CachedTokens) != f.PromptTokens {
		c.t.Fatalf("receipt units %+v do not add up to the %d prompt tokens", r.Units, f.PromptTokens)
	}
	return text, r.Units
}

func successorTurn(id string, turn uint32, succ *Node) *infer.SessionTurn {
	m := succ.id.MachineID()
	return &infer.SessionTurn{ID: id, Turn: turn, SuccessorPeer: []byte(succ.Host().ID()), SuccessorMachine: m[:],
		SuccessorKey: succ.Provider().StandbyKey()}
}

func commonPrefixLen(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestSessionFailoverServesWarm: a primary seals the session state to its
// assigned successor after each of 3 turns; turn 4, failed over to the
// successor, reuses the whole history from its cache (cached_tokens in the
// signed receipt) and answers what an uninterrupted engine answers. A
// standby provider that holds nothing serves the same turn cold and says
// so (cached_tokens 0).
func TestSessionFailoverServesWarm(t *testing.T) {
	primary := startNode(t, testConfig(t, RoleProvider, "software", nil))
	standby := func() Config {
		// Bootstrapped to the primary, as a network's providers reach
		// each other through the DHT.
		cfg := testConfig(t, RoleProvider, "software", primary.Host().Addrs()[:1])
		cfg.Provider.Standby.Enabled = true
		return cfg
	}
	succ := startNode(t, standby())
	cold := startNode(t, standby())
	dir, modelHex := testModelDir(t)
	for _, p := range []*Node{primary, succ, cold} {
		nodetest.Eventually(t, 20*time.Second, "model warm", p.Provider().Warm)
	}
	if primary.Provider().StandbyKey() != nil || len(succ.Provider().StandbyKey()) != sessioncache.PublicKeySize {
		t.Fatal("standby key on the wrong provider")
	}
	// The successor's announcement carries its standby offer: the key
	// states are sealed to and the fee.
	key := hex.EncodeToString(succ.Provider().StandbyKey())
	nodetest.Eventually(t, 20*time.Second, "the successor's standby offer announced", func() bool {
		res, err := primary.rpcCall("tenzro_tailGossip", `{"after":1,"limit":1000}`)
		js, _ := json.Marshal(res)
		return err == nil && strings.Contains(string(js), key) && strings.Contains(string(js), `"fee_per_hour":36000`)
	})
	gw := newSessionCaller(t, modelHex, primary, succ, cold)
	const sid = "sess-failover"
	ctx := context.Background()
	pm := primary.id.MachineID()
	if err := sessioncache.Assign(ctx, gw.h, succ.Host().ID(), sessioncache.Assignment{SessionID: sid, ModelID: gw.modelID,
		PrimaryPeer: primary.Host().ID(), PrimaryMachine: pm[:]}); err != nil {
		t.Fatal(err)
	}

	tok, err := llm.OpenTokenizer(dir, inference.ModelID(gw.modelID))
	if err != nil {
		t.Fatal(err)
	}
	// history is what a turn can reuse: the prompt shared with the
	// conversation up to the previous answer.
	history := func(msgs []inference.Message) (shared, prompt int) {
		prev, _ := tok.EncodePrompt(inference.GenerateRequest{Messages: msgs[:len(msgs)-1]})
		p, _ := tok.EncodePrompt(inference.GenerateRequest{Messages: msgs})
		return commonPrefixLen(prev, p), len(p)
	}
	sp := inference.Sampling{Temperature: 0.7, Seed: 11, MaxTokens: 12}
	msgs := []inference.Message{{Role: "system", Content: "You are a patient harbour master."}, {Role: "user", Content: "Which boats came in today?"}}
	for turn := uint32(1); turn <= 3; turn++ {
		text, units := gw.turn(primary, msgs, sp, successorTurn(sid, turn, succ))
		// The primary keeps the session warm: from turn 2 on the
		// history is not computed again.
		if shared, _ := history(msgs); turn > 1 && int(units.CachedTokens) != shared || turn == 1 && units.CachedTokens != 0 {
			t.Fatalf("turn %d at the primary: cached_tokens %d, want %d", turn, units.CachedTokens, shared)
		}
		msgs = append(msgs, inference.Message{Role: "assistant", Content: text},
			inference.Message{Role: "user", Content: "And after that, which one?"})
		nodetest.Eventually(t, 20*time.Second, "successor warm with the turn", func() bool {
			h, ok := succ.Provider().HeldSession(sid)
			return ok && h.Turn == turn && h.Warm
		})
	}

	// What the successor must have reused: the conversation after turn 3
	// as turn 4's prompt shares it.
	shared, prompt := history(msgs)
	held, _ := succ.Provider().HeldSession(sid)
	if shared != held.Tokens || shared < prompt/2 {
		t.Fatalf("test setup: history %d tokens of a %d-token prompt, state %d", shared, prompt, held.Tokens)
	}

	eng, err := llm.Open(dir, llm.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	// The provider sends each token's text as valid UTF-8.
	var want struct{ Text string }
	if _, err := eng.Generate(ctx, inference.GenerateRequest{Messages: msgs, Sampling: sp}, func(tk inference.Token) error {
		want.Text += inference.ValidText(tk.Text)
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	failover := &infer.SessionTurn{ID: sid, Turn: 4, Failover: true}
	text, units := gw.turn(succ, msgs, sp, failover)
	t.Logf("failover turn 4: cached_tokens %d of a %d-token prompt (history %d)", units.CachedTokens, prompt, shared)
	if int(units.CachedTokens) != shared {
		t.Fatalf("failed-over turn: cached_tokens %d, want the %d-token history (prompt %d)", units.CachedTokens, shared, prompt)
	}
	if text != want.Text {
		t.Fatalf("failed-over turn answered %q, an uninterrupted engine %q", text, want.Text)
	}
	if _, ok := succ.Provider().HeldSession(sid); ok {
		t.Fatal("the successor still stands by for a session it now serves as primary")
	}

	coldText, coldUnits := gw.turn(cold, msgs, sp, failover)
	if coldUnits.CachedTokens != 0 || coldText != want.Text {
		t.Fatalf("cold standby: cached_tokens %d, text %q; want 0 and %q", coldUnits.CachedTokens, coldText, want.Text)
	}

	// A successor the gateway never assigned refuses the state; the
	// primary counts the delivery failed.
	gw.turn(primary, msgs[:2], sp, successorTurn("sess-unassigned", 1, cold))
	nodetest.Eventually(t, 20*time.Second, "the refused state counted at both ends", func() bool {
		return metricValue(t, primary, "tenzro_session_cache_states_send_failed_total") == 1 &&
			metricValue(t, cold, "tenzro_session_cache_rejected_total") == 1
	})

	sent := metricValue(t, primary, "tenzro_session_cache_states_sent_total")
	accepted := metricValue(t, succ, "tenzro_session_cache_states_accepted_total")
	if sent != 3 || accepted != 3 {
		t.Fatalf("states sent %v, accepted %v; want 3 each", sent, accepted)
	}
}

// metricValue reads a counter from n's registry, summed over its labels
// (-1 when absent).
func metricValue(t *testing.T, n *Node, name string) float64 {
	t.Helper()
	mfs, err := n.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			sum := 0.0
			for _, m := range mf.Metric {
				sum += m.GetCounter().GetValue()
			}
			return sum
		}
	}
	return -1
}
