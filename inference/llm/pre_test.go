package llm

import "testing"

// TestPreTokenizerSpellings: files of earlier versions spell GPT-2's
// pre-tokenizer "gpt2"; it reads the same as the GGUF spelling "gpt-2".
func TestPreTokenizerSpellings(t *testing.T) {
	for pre, want := range map[string]string{"gpt2": "gpt-2", "gpt-2": "gpt-2", "llama-bpe": "llama-bpe", "": ""} {
		v := newVocabFixture("gpt2", pre)
		v.word("ab")
		if tok := v.open(t); tok.Pre() != want {
			t.Errorf("pre %q read as %q, want %q", pre, tok.Pre(), want)
		}
	}
}
