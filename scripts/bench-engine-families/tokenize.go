//go:build ignore

// tokenize builds a GGUF tokenizer from a Hugging Face tokenizer.json
// (byte-level BPE: vocabulary, merges, added tokens as control or
// user-defined) with the given tokenizer.ggml.pre, or with PRE "spm" a
// SentencePiece one (byte-fallback BPE as Gemma ships it; piece scores
// are taken as minus the ID, which is how SentencePiece orders BPE
// pieces, as tokenizer.json has no scores), and prints tenzrod's
// token IDs for each string of a JSON list, one JSON line each (part of
// scripts/bench-engine --families). Usage: go run tokenize.go TOKENIZER_JSON PRE CORPUS_JSON
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
)

type hfTokenizer struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Model struct {
		Type string `json:"type"`

		Vocab  map[string]int    `json:"vocab"`
		Merges []json.RawMessage `json:"merges"`
	} `json:"model"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tokenize:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: tokenize TOKENIZER_JSON PRE CORPUS_JSON")
	}
	var hf hfTokenizer
	if err := readJSON(args[0], &hf); err != nil {
		return err
	}
	var corpus []string
	if err := readJSON(args[2], &corpus); err != nil {
		return err
	}
	n := 0
	for _, id := range hf.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range hf.AddedTokens {
		n = max(n, a.ID+1)
	}
	tokens, types := make([]string, n), make([]int32, n)
	for i := range tokens {
		tokens[i], types[i] = fmt.Sprintf("[PAD%d]", i), 5 // unused
	}
	for s, id := range hf.Model.Vocab {
		tokens[id], types[id] = s, 1
	}
	for _, a := range hf.AddedTokens {
		tokens[a.ID], types[a.ID] = a.Content, 4
		if a.Special {
			types[a.ID] = 3
		}
	}
	merges := make([]string, len(hf.Model.Merges))
	for i, m := range hf.Model.Merges {
		var pair []string
		if err := json.Unmarshal(m, &pair); err == nil && len(pair) == 2 {
			merges[i] = pair[0] + " " + pair[1]
		} else if err := json.Unmarshal(m, &merges[i]); err != nil {
			return fmt.Errorf("merge %d: %w", i, err)
		}
	}
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	// A minimal shape, so that llama.cpp can load the file vocabulary-only.
	for k, v := range map[string]uint32{"context_length": 4096, "embedding_length": 64, "block_count": 1,
		"feed_forward_length": 64, "attention.head_count": 1, "attention.head_count_kv": 1} {
		w.SetUint32("llama."+k, v)
	}
	w.SetFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	w.SetStrings("tokenizer.ggml.tokens", tokens)
	if args[1] == "spm" {
		scores := make([]float32, n)
		for i, s := range tokens {
			scores[i] = -float32(i)
			if len(s) == 6 && strings.HasPrefix(s, "<0x") && strings.HasSuffix(s, ">") {
				types[i] = 6 // byte
			}
		}
		w.SetString("tokenizer.ggml.model", "llama")
		w.SetFloat32s("tokenizer.ggml.scores", scores)
		w.SetBool("tokenizer.ggml.add_space_prefix", false)
	} else {
		w.SetString("tokenizer.ggml.model", "gpt2")
		w.SetString("tokenizer.ggml.pre", args[1])
		w.SetStrings("tokenizer.ggml.merges", merges)
	}
	w.SetInt32s("tokenizer.ggml.token_type", types)
	w.SetBool("tokenizer.ggml.add_bos_token", false)
	// The file stays for llama.cpp's side when $TOKENIZE_GGUF names it.
	path := os.Getenv("TOKENIZE_GGUF")
	if path == "" {
		dir, err := os.MkdirTemp("", "tokenize")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "tok.gguf")
	}
	if err := w.WriteFile(path); err != nil {
		return err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tok, err := llm.NewTokenizer(f)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	for _, s := range corpus {
		if err := enc.Encode(tok.Encode(s)); err != nil {
			return err
		}
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	return d.Decode(v)
}
