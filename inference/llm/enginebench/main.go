// Command enginebench measures the embedded engine on one GGUF model the way
// scripts/bench-engine measures llama.cpp on the same file: prefill of a
// fixed batch of token IDs, greedy decoding after a prompt, and the greedy
// tokens themselves, as one JSON line.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
)

type result struct {
	Engine    string  `json:"engine"`
	Kernels   string  `json:"kernels"`
	PrefillN  int     `json:"prefill_tokens"`
	PrefillTS float64 `json:"prefill_tok_s"`
	DecodeN   int     `json:"decode_tokens"`
	DecodeTS  float64 `json:"decode_tok_s"`
	Greedy    []int   `json:"greedy"`
}

func main() {
	model := flag.String("model", "", "model.gguf (or its directory)")
	threads := flag.Int("threads", 2, "threads")
	prefill := flag.String("prefill", "", "JSON array of token IDs to prefill")
	prompt := flag.String("prompt", "", "JSON array of token IDs to decode after")
	decode := flag.Int("decode", 64, "tokens to decode greedily")
	reps := flag.Int("reps", 3, "prefill repetitions (the fastest counts)")
	tokenize := flag.String("tokenize", "", "print the token IDs of this text (no BOS) and exit")
	flag.Parse()
	if *tokenize != "" {
		if err := printTokens(*model, *tokenize); err != nil {
			fmt.Fprintln(os.Stderr, "enginebench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*model, *threads, *prefill, *prompt, *decode, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "enginebench:", err)
		os.Exit(1)
	}
}

func modelPath(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return filepath.Join(path, "model.gguf")
	}
	return path
}

func printTokens(path, text string) error {
	f, err := gguf.Open(modelPath(path))
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read-only: a close error loses nothing
	tok, err := llm.NewTokenizer(f)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(tok.Encode(text))
}

func run(path string, threads int, prefillJSON, promptJSON string, decode, reps int) error {
	path = modelPath(path)
	var pre, prompt []int
	if err := json.Unmarshal([]byte(prefillJSON), &pre); err != nil || len(pre) == 0 {
		return fmt.Errorf("--prefill: want a JSON array of token IDs: %w", err)
	}
	if err := json.Unmarshal([]byte(promptJSON), &prompt); err != nil || len(prompt) == 0 {
		return fmt.Errorf("--prompt: want a JSON array of token IDs: %w", err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	m, err := llm.LoadModel(f)
	f.Close() //nolint:errcheck // read-only: a close error loses nothing
	if err != nil {
		return err
	}
	ctx := context.Background()
	best := time.Duration(1 << 62)
	for range max(reps, 1) {
		seq := m.NewSequence(threads, len(pre), nil)
		start := time.Now()
		if _, err := seq.Forward(ctx, pre, len(pre)-1); err != nil {
			return err
		}
		best = min(best, time.Since(start))
	}
	seq := m.NewSequence(threads, len(prompt)+decode, nil)
	logits, err := seq.Forward(ctx, prompt, len(prompt)-1)
	if err != nil {
		return err
	}
	greedy := []int{argmax(logits[0])}
	start := time.Now()
	for len(greedy) < decode {
		l, err := seq.Forward(ctx, greedy[len(greedy)-1:], 0)
		if err != nil {
			return err
		}
		greedy = append(greedy, argmax(l[0]))
	}
	el := time.Since(start)
	return json.NewEncoder(os.Stdout).Encode(result{
		Engine: "tenzrod", Kernels: llm.Kernels(),
		PrefillN: len(pre), PrefillTS: float64(len(pre)) / best.Seconds(),
		DecodeN: decode - 1, DecodeTS: float64(decode-1) / el.Seconds(),
		Greedy: greedy,
	})
}

// argmax picks the first of equal maxima, as llama.cpp's greedy sampler does.
func argmax(x []float32) int {
	return slices.Index(x, slices.Max(x))
}
