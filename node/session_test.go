package node

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
)

// sessionAnswer is what one turn's response says.
type sessionAnswer struct {
	status  int
	text    string
	session *gateway.SessionInfo
	peer    string
	code    string
	prompt  int // usage.prompt_tokens
	cached  int // usage.prompt_tokens_details.cached_tokens
}

// sessionTurn posts one chat turn (the whole history) through the
// gateway with the given tenzro object and X-Tenzro-Session header.
func sessionTurn(t *testing.T, gw *Node, history []inference.Message, tenzro any, header string) sessionAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": DevnetModelName, "messages": history, "max_tokens": 8, "seed": 7, "tenzro": tenzro})
	req, _ := http.NewRequest(http.MethodPost, gw.APIURL()+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	if header != "" {
		req.Header.Set("X-Tenzro-Session", header)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message inference.Message `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			Details      *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
		Tenzro struct {
			Provider gateway.Provider     `json:"provider"`
			Session  *gateway.SessionInfo `json:"session"`
		} `json:"tenzro"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	a := sessionAnswer{status: resp.StatusCode, session: out.Tenzro.Session, peer: out.Tenzro.Provider.PeerID, code: out.Error.Code,
		prompt: out.Usage.PromptTokens}
	if out.Usage.Details != nil {
		a.cached = out.Usage.Details.CachedTokens
	}
	if len(out.Choices) > 0 {
		a.text = out.Choices[0].Message.Content
	}
	return a
}

// TestSessionAcrossPrimaryLoss is the gateway-visible part of the 5-turn
// acceptance on real hosts: turns 1–3 are pinned to one primary; its node
// is stopped; turn 4 is served elsewhere (by the successor once providers
// stand by, else a replacement), with the answer an uninterrupted engine
// gives for the same history and seed; turn 5 is pinned to the new
// primary. Without the provider side of sessions nobody stands by, and the
// session says so.
func TestSessionAcrossPrimaryLoss(t *testing.T) {
	gw, ps := testMarket(t, 3)
	history := []inference.Message{{Role: "user", Content: "Tell me about rivers"}}
	opts := map[string]any{"session": map[string]any{"continuity": true}, "hedge": false}
	var id, primary string
	var last *gateway.SessionInfo
	for turn := uint32(1); turn <= 3; turn++ {
		a := sessionTurn(t, gw, history, opts, id)
		if a.status != http.StatusOK || a.session == nil {
			t.Fatalf("turn %d: %d %s", turn, a.status, a.code)
		}
		s := a.session
		if turn == 1 {
			id, primary = s.ID, s.Primary.Peer
		}
		if s.ID != id || s.Turn != turn || s.Primary.Peer != primary || a.peer != primary || s.ServedBy != gateway.ServedByPrimary {
			t.Fatalf("turn %d not pinned to %s: %+v (served by %s)", turn, primary, s, a.peer)
		}
		if (s.Successor == nil) == (s.SuccessorReason == "") || s.Successor != nil && s.Successor.Peer == primary {
			t.Fatalf("turn %d successor %+v reason %q", turn, s.Successor, s.SuccessorReason)
		}
		last = s
		history = append(history, inference.Message{Role: "assistant", Content: a.text}, inference.Message{Role: "user", Content: "And then?"})
	}
	for _, p := range ps {
		if p.host.ID().String() == primary {
			if err := p.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := sessionTurn(t, gw, history, nil, id) // later turns need only the ID
	if a.status != http.StatusOK || a.session == nil {
		t.Fatalf("turn 4 after the primary's loss: %d %s", a.status, a.code)
	}
	s := a.session
	if s.Turn != 4 || s.Primary.Peer == primary || a.peer != s.Primary.Peer {
		t.Fatalf("turn 4 %+v served by %s", s, a.peer)
	}
	if last.Successor != nil {
		if s.ServedBy != gateway.ServedBySuccessor || s.Primary.Peer != last.Successor.Peer {
			t.Fatalf("turn 4 %+v, want the successor %s", s, last.Successor.Peer)
		}
	} else if s.ServedBy != gateway.ServedByReplacement {
		t.Fatalf("turn 4 without a successor served_by %q", s.ServedBy)
	}
	// The same history and seed, outside the session, at the same provider.
	cold := sessionTurn(t, gw, history, map[string]any{"provider": s.Primary.Peer}, "")
	if cold.status != http.StatusOK || cold.text != a.text || cold.session != nil {
		t.Fatalf("turn 4 answered %q; the engine alone answers %q (%d)", a.text, cold.text, cold.status)
	}
	history = append(history, inference.Message{Role: "assistant", Content: a.text}, inference.Message{Role: "user", Content: "Finally?"})
	five := sessionTurn(t, gw, history, nil, id)
	if five.status != http.StatusOK || five.session.Turn != 5 || five.session.Primary.Peer != s.Primary.Peer || five.session.ServedBy != gateway.ServedByPrimary {
		t.Fatalf("turn 5 %+v", five.session)
	}
	if f := five.session.Successor; f != nil && (f.Peer == primary || f.Peer == s.Primary.Peer) {
		t.Fatalf("turn 5 successor %s is not fresh", f.Peer)
	}
	got, err := gw.rpcCall("tenzro_getSession", `{"id":"`+id+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	v := got.(gatewayapi.SessionResult)
	if v.Turn != 5 || v.Primary == nil || v.Primary.Peer != s.Primary.Peer || v.Continuity != "true" {
		t.Fatalf("tenzro_getSession %+v", v)
	}
	if _, err := gw.rpcCall("tenzro_getSession", `{"id":"no-such-session"}`); err == nil {
		t.Fatal("an unknown session was found")
	}
	// continuity "required" with nobody standing by is a 409 before any
	// provider is called.
	if last.Successor == nil {
		r := sessionTurn(t, gw, history[:1], map[string]any{"session": map[string]any{"continuity": "required"}}, "")
		if r.status != http.StatusConflict || r.code != "no_successor" {
			t.Fatalf("required without standby: %d %q", r.status, r.code)
		}
	}
}
