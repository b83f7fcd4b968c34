package node

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/commit/committest"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// TestOptimisticCommitmentsCheckOut: an optimistic request through the
// gateway returns TOPLOC proofs whose hash the provider's receipt signs,
// with the token IDs it also signs;
// anyone holding the weights recomputes the steps with one prefill and the
// proofs pass, while the same proofs fail against another prompt.
func TestOptimisticCommitmentsCheckOut(t *testing.T) {
	gw, _ := testMarket(t, 1)
	msgs := []inference.Message{{Role: "user", Content: "Tell me about verification"}}
	body, _ := json.Marshal(map[string]any{"model": DevnetModelName, "messages": msgs, "max_tokens": 40, "seed": 5,
		"tenzro": map[string]any{"verification": "optimistic"}})
	_, raw := postChat(t, gw, testToken, string(body))
	var out struct {
		Tenzro struct {
			Receipt struct {
				Verified   bool
				Commitment []byte
				TokenIDs   []int `json:"token_ids"`
				Receipt    struct {
					CommitmentHash string `json:"commitment_hash"`
					TokensHash     string `json:"tokens_hash"`
				}
			}
			Payment *struct{ Price uint64 }
		}
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	rc := out.Tenzro.Receipt
	if !rc.Verified || len(rc.Commitment) == 0 || rc.Receipt.CommitmentHash == "" || out.Tenzro.Payment == nil || len(rc.TokenIDs) == 0 {
		t.Fatalf("optimistic answer: verified=%v commitment=%d bytes hash=%q ids=%d payment=%v",
			rc.Verified, len(rc.Commitment), rc.Receipt.CommitmentHash, len(rc.TokenIDs), out.Tenzro.Payment)
	}
	proofs, err := commit.Decode(rc.Commitment)
	if err != nil {
		t.Fatal(err)
	}
	// The receipt binds exactly the token IDs the buyer got, one proof
	// step each: the evidence a dispute opens with.
	ids, _ := receipt.TokenIDs(rc.TokenIDs)
	steps := 0
	for _, p := range proofs {
		steps += p.Steps()
	}
	if th := receipt.TokensHash(ids); rc.Receipt.TokensHash != hex.EncodeToString(th[:]) || steps != len(ids) {
		t.Fatalf("receipt signs tokens hash %s, the %d token IDs returned hash to %x; proofs cover %d steps", rc.Receipt.TokensHash, len(ids), th, steps)
	}
	dir, _ := testModelDir(t)
	eng, err := llm.Open(dir, llm.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := eng.EncodePrompt(inference.GenerateRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := committest.VerifyWithEngine(context.Background(), eng, prompt, rc.TokenIDs, proofs, commit.DefaultTolerance)
	if err != nil || !rep.OK {
		t.Fatalf("honest recomputation: %+v %v", rep, err)
	}
	other, _ := eng.EncodePrompt(inference.GenerateRequest{Messages: []inference.Message{{Role: "user", Content: "Something else entirely"}}})
	if rep, err := committest.VerifyWithEngine(context.Background(), eng, other, rc.TokenIDs, proofs, commit.DefaultTolerance); err == nil && rep.OK {
		t.Fatal("proofs passed against another prompt")
	}
}
