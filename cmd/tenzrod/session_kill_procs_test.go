package main

import (
	"context"
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// sessionTurnAt posts one turn of session id ("" for a first turn with
// continuity required) to the gateway at api; it returns the HTTP status
// and the response's tenzro.session.
func sessionTurnAt(t *testing.T, m devnet.Manifest, api, id, text string) (int, *gateway.SessionInfo) {
	t.Helper()
	body := map[string]any{"model": m.Model, "max_tokens": 8, "seed": 5,
		"messages": []map[string]string{{"role": "user", "content": text}}}
	if id == "" {
		body["tenzro"] = map[string]any{"session": map[string]any{"continuity": "required"}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, code, err := devproc.PostChat(ctx, http.DefaultClient, api, m.BuyerToken, id, body)
	if err != nil {
		return code, nil
	}
	defer resp.Body.Close()
	var out struct {
		Tenzro struct {
			Session *gateway.SessionInfo `json:"session"`
		} `json:"tenzro"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decode a session turn: %v", err)
	}
	return code, out.Tenzro.Session
}

// buyerRPC is one JSON-RPC call to api with the buyer's token (session
// reads are the buyer's).
func buyerRPC(api, token, method string, params, result any) error {
	c, err := shell.NewClient(api)
	if err != nil {
		return err
	}
	c.SetToken(token)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, result)
}

type sessionRead struct {
	Turn      uint32 `json:"turn"`
	Successor *struct {
		Peer     string `json:"peer"`
		StreamID string `json:"stream_id"`
	} `json:"successor"`
}

type streamRead struct {
	Stream struct {
		Closed   bool   `json:"closed"`
		Claimed  uint64 `json:"claimed"`
		Refunded uint64 `json:"refunded"`
		Deposit  uint64 `json:"deposit"`
	} `json:"stream"`
}

// streamClosed reports whether stream id is closed, as the node at api
// reads the chain.
func streamClosed(api, token, id string) (streamRead, bool) {
	var sr streamRead
	return sr, buyerRPC(api, token, "tenzro_getStream", map[string]string{"id": id}, &sr) == nil && sr.Stream.Closed
}

// TestDevnetGatewayKilledKeepsSessions: the devnet's gateway is killed
// with SIGKILL mid-session and started again; it takes the session back
// from its store, the next turn continues the same session (turn 2, a
// successor named), and the standby stream opened before the kill is
// either still the session's successor's or stopped: never left running
// unowned. Then the session's successor is killed with no traffic: its
// stream is stopped on chain and another successor engaged.
func TestDevnetGatewayKilledKeepsSessions(t *testing.T) {
	ps := startDevnet(t, buildBinary(t), 1, 3, 1)
	m := ps.M
	var gw devnet.NodeEntry
	for _, n := range m.Nodes {
		if n.Role == "gateway" {
			gw = n
		}
	}
	if gw.Name == "" {
		t.Fatalf("no gateway in the manifest %+v", m)
	}
	var first *gateway.SessionInfo
	if _, ok := devproc.WaitUntil(120*time.Second, 500*time.Millisecond, func() bool {
		code, s := sessionTurnAt(t, m, gw.API, "", "Tell me about rivers")
		first = s
		return code == http.StatusOK && s != nil && s.Successor != nil
	}); !ok {
		t.Fatalf("no first turn with a successor: %+v", first)
	}
	var before sessionRead
	if err := buyerRPC(gw.API, m.BuyerToken, "tenzro_getSession", map[string]string{"id": first.ID}, &before); err != nil ||
		before.Successor == nil || before.Successor.StreamID == "" {
		t.Fatalf("session before the kill %+v: %v", before, err)
	}
	ps.restart(gw, gw.PID)
	var after sessionRead
	if _, ok := devproc.WaitUntil(90*time.Second, 250*time.Millisecond, func() bool {
		return buyerRPC(gw.API, m.BuyerToken, "tenzro_getSession", map[string]string{"id": first.ID}, &after) == nil
	}); !ok {
		t.Fatal("the restarted gateway does not know the session")
	}
	if after.Turn != 1 || after.Successor == nil || after.Successor.StreamID != before.Successor.StreamID {
		t.Fatalf("restored session %+v, before %+v", after, before)
	}
	var next *gateway.SessionInfo
	if _, ok := devproc.WaitUntil(90*time.Second, 500*time.Millisecond, func() bool {
		code, s := sessionTurnAt(t, m, gw.API, first.ID, "And then?")
		next = s
		return code == http.StatusOK && s != nil
	}); !ok {
		t.Fatalf("no second turn after the restart: %+v", next)
	}
	if next.ID != first.ID || next.Turn != 2 || next.Successor == nil {
		t.Fatalf("turn after the restart %+v (first %+v)", next, first)
	}
	if err := buyerRPC(gw.API, m.BuyerToken, "tenzro_getSession", map[string]string{"id": first.ID}, &after); err != nil || after.Successor == nil {
		t.Fatalf("session after turn 2 %+v: %v", after, err)
	}
	if after.Successor.StreamID != before.Successor.StreamID {
		// The successor was replaced: the old stream must be stopped.
		if _, ok := devproc.WaitUntil(30*time.Second, 250*time.Millisecond, func() bool {
			_, closed := streamClosed(gw.API, m.BuyerToken, before.Successor.StreamID)
			return closed
		}); !ok {
			t.Fatalf("the replaced successor's stream %s still runs", before.Successor.StreamID)
		}
	}
	successorKilled(t, ps, gw, after.Successor.Peer, after.Successor.StreamID, first.ID)
}

// successorKilled SIGKILLs the provider standing by for session id and,
// with no traffic, expects the gateway to stop its standby stream on
// chain (closed: claimed stops growing, deposit = claimed + refunded) and
// engage another successor with a running stream.
func successorKilled(t *testing.T, ps *procSet, gw devnet.NodeEntry, succPeer, stream, id string) {
	t.Helper()
	m := ps.M
	var victim devnet.NodeEntry
	for _, n := range m.Nodes {
		if n.Role == "provider" && peerOf(n) == succPeer {
			victim = n
		}
	}
	if victim.Name == "" {
		t.Fatalf("no provider with peer %s", succPeer)
	}
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitDead(t, victim.Name, victim.PID)
	var sr streamRead
	took, ok := devproc.WaitUntil(60*time.Second, 250*time.Millisecond, func() bool {
		var closed bool
		sr, closed = streamClosed(gw.API, m.BuyerToken, stream)
		return closed
	})
	if !ok {
		t.Fatalf("the killed successor's stream %s still runs a minute later", stream)
	}
	// Detection is at once (the connection closes; heartbeats lapse in
	// 6 s); the rest is a challenge's retry and the stop's block, with a
	// loaded machine's slack.
	t.Logf("the killed successor's stream stopped %s after the kill", took)
	if took > 30*time.Second {
		t.Errorf("the killed successor's stream stopped %s after the kill, want within 30 s", took)
	}
	if sr.Stream.Claimed+sr.Stream.Refunded != sr.Stream.Deposit {
		t.Fatalf("stopped stream %+v: deposit = claimed + refunded", sr.Stream)
	}
	var v sessionRead
	if _, ok := devproc.WaitUntil(30*time.Second, 250*time.Millisecond, func() bool {
		if buyerRPC(gw.API, m.BuyerToken, "tenzro_getSession", map[string]string{"id": id}, &v) != nil || v.Successor == nil ||
			v.Successor.Peer == succPeer || v.Successor.StreamID == "" {
			return false
		}
		_, closed := streamClosed(gw.API, m.BuyerToken, v.Successor.StreamID)
		return !closed
	}); !ok {
		t.Fatalf("no new successor with a running stream after the kill: %+v", v)
	}
}
