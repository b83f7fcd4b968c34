package node

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// ask posts a chat request for model to gw and returns the status and body.
func ask(t *testing.T, gw *Node, model, tenzro string) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"tenzro":%s}`, model, tenzro)
	return postChat(t, gw, testToken, body)
}

// TestGatewaySquatterNeverRouted: an unregistered software-key peer
// announcing another model under the devnet name, ten times cheaper, never
// gets a routed call: not by name, not by the price strategy, not when the
// buyer opts in to unregistered providers (the name then means the bound
// or agreed ID, or asks for an ID). /v1/models lists the squatter's ID
// without the name.
func TestGatewaySquatterNeverRouted(t *testing.T) {
	c := newChainNet(t, 1, 1, 0, testChainParams(3600))
	gw, reg := c.validators[0], c.registered[0]
	called := make(chan struct{}, 100)
	squat := misbehavingUpstream(t, func(w http.ResponseWriter) {
		called <- struct{}{}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("squatted", ""), sseChunk("", "stop"), "data: [DONE]\n\n")
	})
	squatID := strings.Repeat("5a", 32)
	sc := testConfig(t, RoleProvider, "software", gw.Host().Addrs()[:1])
	sc.Provider.Models = []ModelConfig{{Name: DevnetModelName, Engine: EngineUpstream, ID: squatID, UpstreamURL: squat,
		UpstreamModel: "x", Verification: []terms.Verification{terms.VerifyNone},
		RateCard: terms.RateCard{InputTokens: 0, OutputTokens: 0, Minimum: 1}}}
	sq := startNode(t, sc)
	up := func(n *Node) bool {
		for _, o := range gw.Table().Offers(DevnetModelName) {
			if o.Peer == n.Host().ID() && o.Status == router.StatusUp && o.State == gossip.StateWarm {
				return true
			}
		}
		return false
	}
	nodetest.Eventually(t, 60*time.Second, "both providers warm at the gateway, the registered one registered", func() bool {
		v, _ := listed(t, gw, reg)
		return up(reg) && up(sq) && v.Registered != nil && *v.Registered
	})
	// The squatter probed how its engine continues before it reported the
	// model warm; that request is not a routed call.
	for len(called) > 0 {
		<-called
	}
	for _, opts := range []string{`{}`, `{"strategy":"price"}`, `{"strategy":"price","allow_unregistered":true}`} {
		for range 3 {
			code, body := ask(t, gw, DevnetModelName, opts)
			if code == http.StatusOK && !strings.Contains(body, reg.Host().ID().String()) {
				t.Fatalf("%s: served by someone else: %.400s", opts, body)
			}
			if code != http.StatusOK && !strings.Contains(opts, "allow_unregistered") {
				t.Fatalf("%s: %d %.400s", opts, code, body)
			}
			if code != http.StatusOK && code != http.StatusConflict {
				t.Fatalf("%s: %d %.400s", opts, code, body)
			}
		}
	}
	if n := len(called); n != 0 {
		t.Fatalf("the squatter's engine was called %d times", n)
	}
	// By its own ID, and only when the buyer opts in, it serves.
	if code, body := ask(t, gw, squatID, `{}`); code != http.StatusServiceUnavailable {
		t.Fatalf("the unregistered ID without opting in: %d %.300s", code, body)
	}
	if code, body := ask(t, gw, squatID, `{"allow_unregistered":true}`); code != http.StatusOK || !strings.Contains(body, "squatted") {
		t.Fatalf("the unregistered ID, opted in: %d %.300s", code, body)
	}
	_, raw := send(t, gw.APIURL()+"/v1/models", "", "")
	var models struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(raw), &models); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, m := range models.Data {
		ids[m.ID] = m.OwnedBy
	}
	var regID string
	for _, o := range gw.Table().Offers(DevnetModelName) {
		if o.Peer == reg.Host().ID() {
			regID = hex.EncodeToString(o.Model.ModelID)
		}
	}
	if _, ok := ids[squatID]; !ok || ids[DevnetModelName] != "tenzro:"+regID || ids[regID] == "" {
		t.Fatalf("models %+v: want both IDs, the name under %s only", models.Data, regID)
	}
	// Quotes by the name price the bound ID only.
	res, err := gw.quote(t.Context(), []byte(`{"model":"`+DevnetModelName+`","units":{"output_tokens":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range res.([]router.QuoteLine) {
		if l.ModelID != regID {
			t.Fatalf("quote for the name lists model %s of %s", l.ModelID, l.Provider)
		}
	}
}
