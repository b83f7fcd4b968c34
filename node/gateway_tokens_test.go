package node

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/router"
)

// countingGateway starts a gateway that holds the devnet model's tokenizer.
func countingGateway(t *testing.T) *Node {
	t.Helper()
	dir, id := testModelDir(t)
	cfg := testConfig(t, RoleGateway, "software", nil)
	cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
	cfg.Router.Tokenizers = []TokenizerConfig{{Dir: dir, ID: id}}
	return startNode(t, cfg)
}

// routed is what a non-stream answer through a gateway says about billing.
type routed struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Tenzro struct {
		Receipt struct {
			Verified bool     `json:"verified"`
			Capped   []string `json:"capped"`
			Counted  []string `json:"counted"`
		} `json:"receipt"`
		Payment struct {
			Units struct {
				Input  uint64 `json:"input_tokens"`
				Output uint64 `json:"output_tokens"`
			} `json:"units"`
		} `json:"payment"`
	} `json:"tenzro"`
}

func askRouted(t *testing.T, gw *Node, model, content string, extra ...string) routed {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}],"max_tokens":%d,"seed":2%s}`, model, content, 9, strings.Join(extra, ""))
	code, raw := postChat(t, gw, testToken, body)
	var r routed
	if err := json.Unmarshal([]byte(raw), &r); err != nil || code != 200 {
		t.Fatalf("status %d, decode: %v", code, err)
	}
	return r
}

// promptTokens is the devnet model's exact prompt length for one user message.
func promptTokens(t *testing.T, content string) int {
	t.Helper()
	dir, id := testModelDir(t)
	h, err := catalog.ParseHash(id)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := llm.OpenTokenizer(dir, inference.ModelID(h))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pt.EncodePrompt(inference.GenerateRequest{Messages: []inference.Message{{Role: "user", Content: content}}})
	if err != nil {
		t.Fatal(err)
	}
	return len(ids)
}

// TestGatewayCountsTokensItself: a gateway holding the model's tokenizer
// bills its own count of both dimensions; with an honest embedded
// provider the count equals the claim.
func TestGatewayCountsTokensItself(t *testing.T) {
	gw := countingGateway(t)
	startNode(t, testConfig(t, RoleProvider, "software", gw.Host().Addrs()[:1]))
	nodetest.Eventually(t, 30*time.Second, "the provider warm at the gateway", func() bool {
		os := gw.Table().Offers(DevnetModelName)
		return len(os) == 1 && os[0].Status == router.StatusUp && os[0].State == gossip.StateWarm
	})
	const q = "How far is the moon?"
	r := askRouted(t, gw, DevnetModelName, q)
	rc := r.Tenzro.Receipt
	if !rc.Verified || !slices.Equal(rc.Counted, []string{"input", "output"}) || len(rc.Capped) != 0 {
		t.Fatalf("receipt: %+v; want verified, counted [input output], nothing capped", rc)
	}
	u := r.Tenzro.Payment.Units
	if want := promptTokens(t, q); u.Input != uint64(want) || u.Output != uint64(r.Usage.CompletionTokens) || u.Output == 0 {
		t.Fatalf("billed %d in / %d out; the tokenizer counts %d in, the answer has %d out", u.Input, u.Output, want, r.Usage.CompletionTokens)
	}

	// The same request cut by a stop sequence taken from inside that
	// answer: the tokens that spelled the stop were generated and are
	// counted, though their text is not in the answer.
	text := r.Choices[0].Message.Content
	stop := ""
	for i := len(text) / 3; i+2 <= len(text); i++ { // two plain ASCII letters
		if isLetter(text[i]) && isLetter(text[i+1]) {
			stop = text[i : i+2]
			break
		}
	}
	if stop == "" {
		t.Fatalf("no place to cut %q", text)
	}
	cut := askRouted(t, gw, DevnetModelName, q, fmt.Sprintf(`,"stop":[%q]`, stop))
	c := cut.Tenzro.Receipt
	if cut.Choices[0].FinishReason != "stop" || strings.Contains(cut.Choices[0].Message.Content, stop) || !c.Verified ||
		!slices.Equal(c.Counted, []string{"input", "output"}) || cut.Tenzro.Payment.Units.Output != uint64(cut.Usage.CompletionTokens) {
		t.Fatalf("cut at %q: %q (%s), receipt %+v, billed %d out of %d", stop, cut.Choices[0].Message.Content,
			cut.Choices[0].FinishReason, c, cut.Tenzro.Payment.Units.Output, cut.Usage.CompletionTokens)
	}
}

// TestGatewayBillsItsCountOverAnInflatedClaim: a provider whose upstream
// engine reports 4000 prompt tokens for a short prompt is billed the
// gateway's own count; its output claim, which no token IDs back, keeps
// the wire's caps.
func TestGatewayBillsItsCountOverAnInflatedClaim(t *testing.T) {
	gw := countingGateway(t)
	_, id := testModelDir(t)
	inflated := misbehavingUpstream(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("hello there", ""), sseChunk("", "stop"),
			`data: {"choices":[],"usage":{"prompt_tokens":4000,"completion_tokens":2}}`+"\n\n", "data: [DONE]\n\n")
	})
	upstreamProvider(t, inflated, id, gw.Host().Addrs()[0])
	nodetest.Eventually(t, 30*time.Second, "the fronting provider warm at the gateway", func() bool {
		os := gw.Table().Offers("fronted")
		return len(os) == 1 && os[0].Status == router.StatusUp && os[0].State == gossip.StateWarm
	})
	const q = "Say hello"
	r := askRouted(t, gw, "fronted", q)
	rc := r.Tenzro.Receipt
	if !rc.Verified || !slices.Equal(rc.Counted, []string{"input"}) || !slices.Contains(rc.Capped, "input:exact_count") {
		t.Fatalf("receipt: %+v; want verified, input counted and capped by the count", rc)
	}
	if u, want := r.Tenzro.Payment.Units, promptTokens(t, q); u.Input != uint64(want) || u.Output != 2 {
		t.Fatalf("billed %d in / %d out; want the gateway's %d in and the claimed 2 out", u.Input, u.Output, want)
	}
}

// A tokenizer entry whose directory does not match its ID stops the node
// with an error naming the entry.
func TestTokenizerMismatchRefused(t *testing.T) {
	dir, _ := testModelDir(t)
	cfg := testConfig(t, RoleGateway, "software", nil)
	cfg.Router.Tokenizers = []TokenizerConfig{{Dir: dir, ID: strings.Repeat("ab", 32)}}
	_, err := New(t.Context(), cfg, Options{Logger: testLogger()})
	if err == nil || !strings.Contains(err.Error(), "router.tokenizers[0]") || !strings.Contains(err.Error(), "want abab") {
		t.Fatalf("New with a mismatched tokenizer: %v", err)
	}
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
