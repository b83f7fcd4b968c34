package node

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// TestSessionStandbyOnChain: on a chain, the gateway pays a session's
// successor by a stream from the buyer's escrow it settles, at the
// successor's standby fee for the horizon; the successor (another
// operator) claims it as it accrues; when the primary's node stops the
// successor serves the next turn, its standby stream is stopped (accrued
// paid, the rest refunded) and a new successor's stream opens.
func TestSessionStandbyOnChain(t *testing.T) {
	const fee = standbyChainFee
	sc := newStandbyChain(t, func(*Config) {})
	net, gw, chain, session, stream := sc.net, sc.gw, sc.gw.Chain(), sc.session, sc.stream
	operator := func(machine string) terms.AccountID {
		t.Helper()
		m, err := identity.ParseMachineID(machine)
		if err != nil {
			t.Fatal(err)
		}
		p, ok, err := chain.Provider(t.Context(), m)
		if err != nil || !ok {
			t.Fatalf("provider %s: ok %v, %v", machine, ok, err)
		}
		return p.Operator
	}

	history := []inference.Message{{Role: "user", Content: "Tell me about rivers"}}
	one := acceptancePost(t, gw, history, map[string]any{"session": map[string]any{"continuity": "required"}}, "")
	s := one.session
	if s == nil || s.Successor == nil || operator(s.Successor.Machine) == operator(s.Primary.Machine) {
		t.Fatalf("turn 1: %+v", s)
	}
	v := session(s.ID)
	if v.Successor == nil || v.Successor.StreamID == "" || v.Stream == nil {
		t.Fatalf("session %+v: no standby stream", v)
	}
	first := v.Successor.StreamID
	if st := stream(first); st.Payer != testBuyer() || st.Settler != accountKey(t, gw.Config()) || st.Payee.String() != s.Successor.Machine ||
		st.Rate != fee || st.Deposit != fee || st.Closed {
		t.Fatalf("standby stream %+v", st)
	}
	nodetest.Eventually(t, 30*time.Second, "the successor's claims to land", func() bool { return stream(first).Claimed > 0 })

	for _, p := range net.registered {
		if p.Host().ID().String() == s.Primary.Peer {
			if err := p.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	history = append(history, inference.Message{Role: "assistant", Content: one.text}, inference.Message{Role: "user", Content: "And then?"})
	two := acceptancePost(t, gw, history, nil, s.ID)
	if f := two.session; f == nil || f.ServedBy != gateway.ServedBySuccessor || f.Primary.Peer != s.Successor.Peer || f.Successor == nil ||
		f.Successor.Peer == s.Primary.Peer || f.Successor.Peer == s.Successor.Peer {
		t.Fatalf("turn 2: %+v", f)
	}
	nodetest.Eventually(t, 30*time.Second, "the promoted successor's stream to stop", func() bool { return stream(first).Closed })
	if st := stream(first); st.Claimed+st.Refunded != st.Deposit || st.Claimed == 0 {
		t.Fatalf("stopped stream %+v: deposit = claimed + refunded", st)
	}
	// tenzro_getStream finds it closed (tenzro_getAccount lists only open
	// streams).
	got, err := gw.rpcCall("tenzro_getStream", `{"id":"`+first+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	if sv := got.(chainapi.StreamView); sv.Stream.ID.String() != first || !sv.Stream.Closed || sv.Balance != 0 || sv.Stream.Claimed != stream(first).Claimed {
		t.Fatalf("tenzro_getStream %+v", sv)
	}
	if _, err := gw.rpcCall("tenzro_getStream", `{"id":"`+strings.Repeat("0", 64)+`"}`); err == nil {
		t.Fatal("an unknown stream was found")
	}
	v = session(s.ID)
	if v.Successor == nil || v.Successor.StreamID == "" || v.Successor.StreamID == first || stream(v.Successor.StreamID).Closed {
		t.Fatalf("after the failover: %+v", v)
	}
	// The buyer ends the session: the new successor's stream stops
	// before the answer, not at the idle timeout.
	second := v.Successor.StreamID
	code, ended := endSession(t, gw, s.ID, testToken)
	if code != http.StatusOK || ended.ID != s.ID || ended.Turns != 2 || ended.Stream != second || !ended.Stopped {
		t.Fatalf("DELETE the session: %d %+v", code, ended)
	}
	if st := stream(second); !st.Closed || st.Claimed+st.Refunded != st.Deposit {
		t.Fatalf("the ended session's stream %+v", st)
	}
	if _, err := gw.rpcCall("tenzro_getSession", `{"id":"`+s.ID+`"}`); err == nil {
		t.Fatal("an ended session is still found")
	}
	if code, _ := endSession(t, gw, s.ID, testToken); code != http.StatusNotFound {
		t.Fatalf("ending it again: %d", code)
	}
}

// endSession sends DELETE /v1/sessions/{id} with token.
func endSession(t *testing.T, gw *Node, id, token string) (int, gateway.EndedSession) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, gw.APIURL()+"/v1/sessions/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out gateway.EndedSession
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, out
}
