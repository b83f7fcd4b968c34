package upstream

import (
	"encoding/json"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
)

// TestSeedFitsOpenAI: a seed with the top bit set (a gateway draws all 64
// bits) goes to the engine as a non-negative int64, which every
// OpenAI-compatible engine takes.
func TestSeedFitsOpenAI(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c.body(&Request{Chat: true, Sampling: inference.Sampling{Seed: 1<<63 | 5}}))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Seed int64 `json:"seed"`
	}
	if err := json.Unmarshal(b, &got); err != nil || got.Seed != 5 {
		t.Fatalf("seed sent as %s: %v", b, err)
	}
}
