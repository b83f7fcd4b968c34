package node

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
)

// TestDeadSuccessorStreamStopped: a session's successor dies with no
// traffic; the gateway, challenging it at once (its connection closed,
// then its heartbeats lapsed), stops its standby stream on chain (claimed
// stops growing: the stream is closed, deposit = claimed + refunded) and
// engages another successor with a stream of its own, within the
// challenge interval and a few blocks.
func TestDeadSuccessorStreamStopped(t *testing.T) {
	const fee = 36_000
	const every = 5 * time.Second
	net := newChainNetWith(t, 1, 3, 0, testChainParams(3600), chainExtra{provOpts: []func(*Config){func(c *Config) {
		c.Provider.Standby.Enabled, c.Provider.Standby.FeePerHour, c.Provider.Standby.ClaimInterval = true, fee, time.Second
	}}}, func(c *Config) { c.Router.ProbeInterval, c.Router.Sessions.ChallengeInterval = 0, every })
	gw, chain := net.validators[0], net.validators[0].Chain()
	waitRegistered(t, gw, net.registered)
	nodetest.Eventually(t, 30*time.Second, "every provider's standby offer at the gateway", func() bool {
		n := 0
		for _, o := range gw.Table().Offers(DevnetModelName) {
			if o.Standby != nil {
				n++
			}
		}
		return n == 3
	})
	session := func(id string) gatewayapi.SessionResult {
		t.Helper()
		v, err := gw.rpcCall("tenzro_getSession", `{"id":"`+id+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		return v.(gatewayapi.SessionResult)
	}
	stream := func(id string) ledger.Stream {
		t.Helper()
		h, err := terms.ParseHash(id)
		if err != nil {
			t.Fatal(err)
		}
		s, ok, err := chain.Stream(t.Context(), h)
		if err != nil || !ok {
			t.Fatalf("stream %s: ok %v, %v", id, ok, err)
		}
		return s
	}
	history := []inference.Message{{Role: "user", Content: "Tell me about rivers"}}
	s := acceptancePost(t, gw, history, map[string]any{"session": map[string]any{"continuity": "required"}}, "").session
	if s == nil || s.Successor == nil {
		t.Fatalf("turn 1: %+v", s)
	}
	first := session(s.ID).Successor.StreamID
	nodetest.Eventually(t, 30*time.Second, "the successor's claims to land", func() bool { return stream(first).Claimed > 0 })
	for _, p := range net.registered {
		if p.Host().ID().String() == s.Successor.Peer {
			if err := p.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now()
	nodetest.Eventually(t, 60*time.Second, "the dead successor's stream to stop", func() bool { return stream(first).Closed })
	// The bound leaves a loaded machine a few blocks' slack beyond the
	// interval; the detection itself is at once (the closed connection).
	if took := time.Since(start); took > every+10*time.Second {
		t.Errorf("the dead successor's stream stopped %s after its death, want within %s and a few blocks", took, every)
	}
	if st := stream(first); st.Claimed+st.Refunded != st.Deposit || st.Claimed == 0 {
		t.Fatalf("stopped stream %+v: deposit = claimed + refunded", st)
	}
	nodetest.Eventually(t, 30*time.Second, "a new successor engaged", func() bool {
		v := session(s.ID)
		return v.Successor != nil && v.Successor.Peer != s.Successor.Peer && v.Successor.StreamID != "" && !stream(v.Successor.StreamID).Closed
	})
	if v := session(s.ID); v.Successor.Peer == s.Primary.Peer || v.Turn != 1 {
		t.Fatalf("after the replacement: %+v", v)
	}
}
