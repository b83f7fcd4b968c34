package llm_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// FuzzLoadModel feeds arbitrary bytes through the whole loading path (GGUF
// parsing, configuration, tokenizer, weights) and, when a model loads, runs
// it briefly. Malformed files must give errors, never panics.
func FuzzLoadModel(f *testing.F) {
	// One seed per tokenizer, then one per architecture trait set (head
	// norms and sliding windows, biases, rope factors).
	for _, kind := range []string{"gpt2", "llama", "gemma3", "qwen2", "llama3-rope"} {
		o := modelgen.DevnetOptions()
		o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 1, 32, 2, 1, 32, 400, 32
		o.Quant, o.Tokenizer = gguf.TypeQ8_0, "gpt2"
		switch kind {
		case "llama":
			o.Tokenizer, o.MoE, o.Experts, o.ExpertsUsed = "llama", true, 2, 1
		case "gemma3":
			o.Arch, o.Layers, o.SlidingWindow, o.HeadDim, o.RopeScaling, o.RopeFactor = "gemma3", 2, 4, 16, "linear", 2
		case "qwen2":
			o.Arch = "qwen2"
		case "llama3-rope":
			o.RopeScaling = "llama3"
		}
		dir := f.TempDir()
		if err := modelgen.GenerateModel(dir, o); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "model.gguf"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "m.gguf")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		gf, err := gguf.Open(p)
		if err != nil {
			return
		}
		defer gf.Close()
		m, err := llm.LoadModel(gf)
		if err != nil {
			return
		}
		e := llm.New(m, inference.ModelID{}, llm.Options{Threads: 2, MaxContext: 16})
		ids, _ := e.Tokenize("Hello <|im_start|> wörld")
		e.Detokenize(ids)
		ctx := context.Background()
		req := inference.GenerateRequest{Messages: chat("hi"), Sampling: inference.Sampling{Temperature: 1, TopP: 0.9, MaxTokens: 2}, LogProbs: 2}
		if res, err := e.Generate(ctx, req, func(inference.Token) error { return nil }); err == nil && len(res.Tokens) > 0 {
			if _, err := e.Score(ctx, res.Prompt, res.Tokens, 2); err != nil {
				t.Fatalf("score after a successful generation: %v", err)
			}
		}
	})
}
