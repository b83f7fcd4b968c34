package modelgen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
)

// Token types (llama.cpp).
const (
	typeNormal  = 1
	typeUnknown = 2
	typeControl = 3
	typeUnused  = 5
	typeByte    = 6
)

type vocab struct {
	tokens []string
	types  []int32
	scores []float32
	merges []string
	ids    map[string]bool
}

func (v *vocab) add(tok string, typ int32, score float32) bool {
	if v.ids[tok] {
		return false
	}
	v.ids[tok] = true
	v.tokens = append(v.tokens, tok)
	v.types = append(v.types, typ)
	v.scores = append(v.scores, score)
	return true
}

// pad fills the vocabulary with unused reserved tokens up to n.
func (v *vocab) pad(n int) {
	for i := 0; len(v.tokens) < n; i++ {
		v.add(fmt.Sprintf("<|reserved_%d|>", i), typeUnused, -1e9)
	}
}

// buildVocab returns the tokenizer of the given kind with at most n tokens
// before padding to n.
func buildVocab(kind string, n int) (*vocab, error) {
	v := &vocab{ids: map[string]bool{}}
	switch kind {
	case "gpt2", "":
		for _, s := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"} {
			v.add(s, typeControl, 0)
		}
		for b := 0; b < 256; b++ {
			v.add(llm.ByteLevel(string([]byte{byte(b)})), typeNormal, 0)
		}
		if n < len(v.tokens) {
			return nil, fmt.Errorf("modelgen: a gpt2 vocabulary needs at least %d tokens, got %d", len(v.tokens), n)
		}
		merges := cachedMerges("gpt2", n-len(v.tokens), func(w string) []string {
			return strings.Split(llm.ByteLevel(w), "")
		})
		for _, m := range merges {
			v.merges = append(v.merges, m[0]+" "+m[1])
			v.add(m[0]+m[1], typeNormal, 0)
		}
	case "llama":
		v.add("<unk>", typeUnknown, 0)
		for _, s := range []string{"<s>", "</s>", "<|im_start|>", "<|im_end|>"} {
			v.add(s, typeControl, 0)
		}
		for b := 0; b < 256; b++ {
			v.add(fmt.Sprintf("<0x%02X>", b), typeByte, 0)
		}
		chars := map[string]bool{"▁": true}
		for _, r := range strings.ReplaceAll(corpus, " ", "▁") {
			if r != '\n' {
				chars[string(r)] = true
			}
		}
		sorted := make([]string, 0, len(chars))
		for c := range chars {
			sorted = append(sorted, c)
		}
		sort.Strings(sorted)
		for _, c := range sorted {
			v.add(c, typeNormal, -1e6)
		}
		if n < len(v.tokens) {
			return nil, fmt.Errorf("modelgen: a llama vocabulary needs at least %d tokens, got %d", len(v.tokens), n)
		}
		merges := cachedMerges("llama", n-len(v.tokens), func(w string) []string {
			return strings.Split(strings.ReplaceAll(w, " ", "▁"), "")
		})
		for i, m := range merges {
			if len(v.tokens) >= n {
				break
			}
			v.add(m[0]+m[1], typeNormal, -float32(i))
		}
	default:
		return nil, fmt.Errorf("modelgen: unknown tokenizer %q (want gpt2 or llama)", kind)
	}
	v.pad(n)
	return v, nil
}

// write stores the tokenizer metadata.
func (v *vocab) write(w *gguf.Writer, kind string) {
	if kind == "" {
		kind = "gpt2"
	}
	w.SetString("tokenizer.ggml.model", kind)
	w.SetStrings("tokenizer.ggml.tokens", v.tokens)
	w.SetInt32s("tokenizer.ggml.token_type", v.types)
	w.SetString("tokenizer.chat_template", llm.ChatMLTemplate)
	if kind == "gpt2" {
		// llama.cpp knows GPT-2's pre-tokenizer as "gpt-2" and refuses
		// any name it does not know.
		w.SetString("tokenizer.ggml.pre", "gpt-2")
		w.SetStrings("tokenizer.ggml.merges", v.merges)
		w.SetUint32("tokenizer.ggml.bos_token_id", 0)
		w.SetUint32("tokenizer.ggml.eos_token_id", 2)
		w.SetBool("tokenizer.ggml.add_bos_token", false)
		return
	}
	w.SetFloat32s("tokenizer.ggml.scores", v.scores)
	w.SetUint32("tokenizer.ggml.unknown_token_id", 0)
	w.SetUint32("tokenizer.ggml.bos_token_id", 1)
	w.SetUint32("tokenizer.ggml.eos_token_id", 2)
	w.SetBool("tokenizer.ggml.add_bos_token", true)
	w.SetBool("tokenizer.ggml.add_space_prefix", true)
}
