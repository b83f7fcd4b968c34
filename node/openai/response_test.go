package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestLogProbsRenderLikeOpenAI: a completion's top_logprobs keep the most
// probable token first (not alphabetical, as a Go map marshals), and chat
// log-probs carry "refusal": null.
func TestLogProbsRenderLikeOpenAI(t *testing.T) {
	lps := []terms.TokenLogProbs{{Token: "b", LogProb: -0.1, Top: []terms.TopLogProb{
		{Token: "zebra", LogProb: -0.1}, {Token: "apple", LogProb: -2.5}, {Token: "mango", LogProb: -3}}}}
	res := &Result{Model: "m", Text: "b", FinishReason: "stop", LogProbs: lps}
	text, err := json.Marshal(finalBody(&Request{TopLogProbs: 3}, res, "id", 1))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"top_logprobs":[{"zebra":-0.1,"apple":-2.5,"mango":-3}]`; !strings.Contains(string(text), want) {
		t.Fatalf("completion log-probs %s, want %s", text, want)
	}
	chat, err := json.Marshal(finalBody(&Request{Chat: true, TopLogProbs: 3}, res, "id", 1))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(chat), `"refusal":null`) {
		t.Fatalf("chat log-probs without refusal null: %s", chat)
	}
	dup, _ := json.Marshal(topByProb{{Token: "x", LogProb: -1}, {Token: "x", LogProb: -2}})
	if string(dup) != `{"x":-1}` {
		t.Fatalf("a repeated token renders as %s, want its first entry only", dup)
	}
}
