package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestGatewayBuyerLeavesMidStream: a buyer who disconnects after a few
// chunks of a long stream pays, receipt verified, for what was delivered
// to it: one payment record, its output at most the delivered text's
// bytes (and the end token), far below max_tokens; the departure does not
// count against the provider. (The stop itself, and a provider that sends
// no receipt, are unit-tested in router/gateway.)
func TestGatewayBuyerLeavesMidStream(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		gw, ps := testMarket(t, 1)
		buyerLeaves(t, gw, ps[0], DevnetModelName)
	})
	t.Run("upstream", func(t *testing.T) {
		// An engine outside the system that streams a word every 20 ms
		// until the provider hangs up.
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i < 1500; i++ {
				if _, err := fmt.Fprint(w, sseChunk(fakeWord(i), "")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
			fmt.Fprint(w, sseChunk("", "length"), "data: [DONE]\n\n")
		}))
		t.Cleanup(slow.Close)
		_, id := testModelDir(t)
		gw, ps := testMarketServing(t, 1, ModelConfig{Name: "fronted", Engine: EngineUpstream, ID: id,
			UpstreamURL: slow.URL + "/v1", UpstreamModel: "slow", Verification: []terms.Verification{terms.VerifyNone}})
		buyerLeaves(t, gw, ps[0], "fronted")
	})
}

// buyerLeaves streams a long answer of model from gw, leaves after five
// chunks and checks that p is paid for the delivered part only.
func buyerLeaves(t *testing.T, gw, p *Node, model string) {
	ps := []*Node{p}
	before, _ := gw.store.Balance("alice")
	ctx, cancel := context.WithCancel(t.Context())
	// A fixed seed: with the server's random one the random-weight model
	// now and then samples its end token within five chunks.
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"Write a long story"}],"max_tokens":1500,"seed":7,"stream":true,"tenzro":{"hedge":false}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.APIURL()+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var delivered strings.Builder
	chunks := 0
	sc := bufio.NewScanner(resp.Body)
	for chunks < 5 && sc.Scan() {
		if c := sseContent(sc.Text()); c != "" {
			chunks++
			delivered.WriteString(c)
		}
	}
	cancel() // the buyer leaves
	resp.Body.Close()
	if chunks < 5 {
		t.Fatalf("stream ended after %d chunks", chunks)
	}
	var pays []*receipt.Bill
	nodetest.Eventually(t, 15*time.Second, "the delivered part billed", func() bool {
		pays, _ = gw.store.ListPayments("alice", 10)
		return len(pays) == 1
	})
	after, _ := gw.store.Balance("alice")
	// The buyer may have been sent a little more than it read before it
	// closed: allow the chunks in flight, never anything near max_tokens.
	limit := uint64(delivered.Len()) + receipt.OutputEndTokens + 64
	if u := pays[0].Units; u.OutputTokens == 0 || u.OutputTokens > limit || before-after != pays[0].Price ||
		string(pays[0].ProviderPeer) != string(ps[0].Host().ID()) {
		t.Fatalf("read %q; payment %+v (output %d, limit %d), charged %d", delivered.String(), pays[0], u.OutputTokens, limit, before-after)
	}
	t.Logf("read %d bytes in %d chunks; billed %+v", delivered.Len(), chunks, pays[0].Units)
	nodetest.Eventually(t, 5*time.Second, "the departure counted", func() bool {
		return gw.gateway.Metrics().Snapshot().Providers[ps[0].Host().ID().String()] != nil
	})
	if c := gw.gateway.Metrics().Snapshot().Providers[ps[0].Host().ID().String()]; c.Failures != 0 {
		t.Fatalf("the buyer's departure counted against the provider: %+v", c)
	}
}

// sseContent is the text one line of a chat stream carries: its first
// choice's delta content, "" for any other line ([DONE], a comment, an
// event without text).
func sseContent(line string) string {
	data, ok := strings.CutPrefix(line, "data: ")
	if !ok || data == "[DONE]" {
		return ""
	}
	var ch struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal([]byte(data), &ch) != nil || len(ch.Choices) == 0 {
		return ""
	}
	return ch.Choices[0].Delta.Content
}
