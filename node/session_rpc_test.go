package node

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/node/rpc"
)

// TestGetSessionNeedsBuyerToken: tenzro_getSession over /rpc tells a
// session (its payer, turns, providers) only to its buyer's bearer token
// or the operator's admin token. Without a token, or with one nobody
// holds, it is HTTP 401 with CodeUnauthorized; another buyer's token
// finds no session, as DELETE /v1/sessions/ID finds none for it.
func TestGetSessionNeedsBuyerToken(t *testing.T) {
	gw, _ := testMarket(t, 1)
	a := sessionTurn(t, gw, []inference.Message{{Role: "user", Content: "Tell me about lakes"}},
		map[string]any{"session": map[string]any{"continuity": true}, "hedge": false}, "")
	if a.status != http.StatusOK || a.session == nil {
		t.Fatalf("session turn: %d %s", a.status, a.code)
	}
	id := a.session.ID
	type answer struct {
		Result *struct {
			ID    string `json:"id"`
			Payer string `json:"payer"`
		} `json:"result"`
		Error *rpc.Error `json:"error"`
	}
	get := func(auth string) (int, answer) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tenzro_getSession","params":{"id":"` + id + `"}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, gw.APIURL()+"/rpc", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out answer
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%q: decode: %v", auth, err)
		}
		return resp.StatusCode, out
	}
	for _, auth := range []string{"", "Bearer ", "Bearer sk-nobody-holds-this", "Basic " + testToken, testToken} {
		status, out := get(auth)
		if status != http.StatusUnauthorized || out.Error == nil || out.Error.Code != rpc.CodeUnauthorized || out.Result != nil {
			t.Errorf("Authorization %q: HTTP %d %+v, want 401 with code %d and no session", auth, status, out.Error, rpc.CodeUnauthorized)
		}
	}
	if status, out := get("Bearer " + otherToken); status != http.StatusOK || out.Error == nil || out.Error.Code != rpc.CodeInvalidParams || out.Result != nil {
		t.Errorf("another buyer's token: HTTP %d %+v, want no session", status, out.Error)
	}
	for _, tok := range []string{testToken, adminToken} {
		status, out := get("Bearer " + tok)
		if status != http.StatusOK || out.Error != nil || out.Result == nil || out.Result.ID != id || out.Result.Payer != "alice" {
			t.Errorf("token %q: HTTP %d %+v %+v, want alice's session %s", tok, status, out.Error, out.Result, id)
		}
	}
	// DELETE agrees: another buyer cannot end it.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, gw.APIURL()+"/v1/sessions/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+otherToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("DELETE with another buyer's token: %d, want 404", resp.StatusCode)
	}
}
