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

// standbyChainFee is every provider's standby fee in a standbyChain: 10
// micro-units a second.
const standbyChainFee = 36_000

// standbyChain is a chain of one validator (the gateway) and three
// providers, each standing by for standbyChainFee and claiming every
// second, their offers known to the gateway.
type standbyChain struct {
	t   *testing.T
	net *chainNet
	gw  *Node
}

func newStandbyChain(t *testing.T, valOpt func(*Config)) *standbyChain {
	t.Helper()
	net := newChainNetWith(t, 1, 3, 0, testChainParams(3600), chainExtra{provOpts: []func(*Config){func(c *Config) {
		c.Provider.Standby.Enabled, c.Provider.Standby.FeePerHour, c.Provider.Standby.ClaimInterval = true, standbyChainFee, time.Second
	}}}, func(c *Config) { c.Router.ProbeInterval = 0; valOpt(c) })
	gw := net.validators[0]
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
	return &standbyChain{t: t, net: net, gw: gw}
}

// session is tenzro_getSession at the gateway.
func (sc *standbyChain) session(id string) gatewayapi.SessionResult {
	sc.t.Helper()
	v, err := sc.gw.rpcCall("tenzro_getSession", `{"id":"`+id+`"}`)
	if err != nil {
		sc.t.Fatal(err)
	}
	return v.(gatewayapi.SessionResult)
}

// stream reads stream id from the chain.
func (sc *standbyChain) stream(id string) ledger.Stream {
	sc.t.Helper()
	h, err := terms.ParseHash(id)
	if err != nil {
		sc.t.Fatal(err)
	}
	s, ok, err := sc.gw.Chain().Stream(sc.t.Context(), h)
	if err != nil || !ok {
		sc.t.Fatalf("stream %s: ok %v, %v", id, ok, err)
	}
	return s
}

// TestDeadSuccessorStreamStopped: a session's successor dies with no
// traffic; the gateway, challenging it at once (its connection closed,
// then its heartbeats lapsed), stops its standby stream on chain (claimed
// stops growing: the stream is closed, deposit = claimed + refunded) and
// engages another successor with a stream of its own, within the
// challenge interval and a few blocks.
func TestDeadSuccessorStreamStopped(t *testing.T) {
	const every = 5 * time.Second
	sc := newStandbyChain(t, func(c *Config) { c.Router.Sessions.ChallengeInterval = every })
	net, gw, session, stream := sc.net, sc.gw, sc.session, sc.stream
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
