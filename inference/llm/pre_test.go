package llm_test

import (
	"path/filepath"
	"testing"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
)

// TestPreTokenizerSpellings: files of earlier versions spell GPT-2's
// pre-tokenizer "gpt2"; it reads the same as the GGUF spelling "gpt-2".
func TestPreTokenizerSpellings(t *testing.T) {
	for pre, want := range map[string]string{"gpt2": "gpt-2", "gpt-2": "gpt-2", "llama-bpe": "llama-bpe", "": ""} {
		w := gguf.NewWriter()
		w.SetString("general.architecture", "llama")
		w.SetString("tokenizer.ggml.model", "gpt2")
		w.SetStrings("tokenizer.ggml.tokens", []string{"a", "b", "ab"})
		w.SetStrings("tokenizer.ggml.merges", []string{"a b"})
		if pre != "" {
			w.SetString("tokenizer.ggml.pre", pre)
		}
		path := filepath.Join(t.TempDir(), "tok.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := llm.NewTokenizer(f)
		f.Close()
		if err != nil {
			t.Fatalf("pre %q: %v", pre, err)
		}
		if tok.Pre() != want {
			t.Errorf("pre %q read as %q, want %q", pre, tok.Pre(), want)
		}
	}
}
