package llm

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// vocabFixture is a tiny tokenizer vocabulary built by the test: GPT-2's
// 256 byte symbols (or SentencePiece's <0xXX> byte tokens), the given
// special tokens, and whole-word tokens with the merges that build them.
type vocabFixture struct {
	model, pre string
	tokens     []string
	types      []int32
	scores     []float32
	merges     []string
	bools      map[string]bool
	ids        map[string]uint32
}

func newVocabFixture(model, pre string) *vocabFixture {
	v := &vocabFixture{model: model, pre: pre, bools: map[string]bool{}, ids: map[string]uint32{}}
	for b := 0; b < 256; b++ {
		if model == "llama" {
			v.add("<0x"+hex2(byte(b))+">", tokByte, 0)
		} else {
			v.add(string(byteToRune[b]), tokNormal, 0)
		}
	}
	return v
}

func hex2(b byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[b>>4], digits[b&15]})
}

func (v *vocabFixture) add(tok string, typ int32, score float32) int {
	for i, s := range v.tokens {
		if s == tok {
			return i
		}
	}
	v.tokens = append(v.tokens, tok)
	v.types = append(v.types, typ)
	v.scores = append(v.scores, score)
	return len(v.tokens) - 1
}

// word adds a byte-level word and the left-to-right chain of merges that
// builds it.
func (v *vocabFixture) word(w string) {
	rs := []rune(ByteLevel(w))
	left := string(rs[0])
	for _, r := range rs[1:] {
		m := left + " " + string(r)
		if !slices.Contains(v.merges, m) {
			v.merges = append(v.merges, m)
		}
		left += string(r)
		v.add(left, tokNormal, 0)
	}
}

func (v *vocabFixture) open(t testing.TB) *Tokenizer {
	t.Helper()
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetString("tokenizer.ggml.model", v.model)
	if v.pre != "" {
		w.SetString("tokenizer.ggml.pre", v.pre)
	}
	w.SetStrings("tokenizer.ggml.tokens", v.tokens)
	w.SetInt32s("tokenizer.ggml.token_type", v.types)
	w.SetFloat32s("tokenizer.ggml.scores", v.scores)
	if v.model == "gpt2" {
		w.SetStrings("tokenizer.ggml.merges", v.merges)
	}
	for k, b := range v.bools {
		w.SetBool(k, b)
	}
	for k, id := range v.ids {
		w.SetUint32(k, id)
	}
	path := filepath.Join(t.TempDir(), "tok.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-only
	tok, err := NewTokenizer(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// llamaText is text as llama.cpp sees it: each invalid UTF-8 byte is U+FFFD.
func llamaText(s string) string {
	var b strings.Builder
	for _, r := range decodeCodepoints(s) {
		appendCodepoint(&b, r)
	}
	return b.String()
}

// TestRuleFixturesTokenize: for each rule, a vocabulary holding the
// corpus's pre-tokens (as the rule's regexes split them) tokenizes the
// corpus without a token crossing a pre-token boundary, decodes byte for
// byte, and under llama-bpe (ignore_merges) gives exactly one token per
// pre-token.
func TestRuleFixturesTokenize(t *testing.T) {
	for rule, exprs := range ruleRegexes {
		v := newVocabFixture("gpt2", rule)
		for _, s := range preCorpus {
			for _, w := range regexSplit(t, exprs, s) {
				v.word(w)
			}
		}
		tok := v.open(t)
		for _, s := range preCorpus {
			ids := tok.Encode(s)
			if got := tok.Decode(ids); got != llamaText(s) {
				t.Fatalf("%s: %q decodes as %q", rule, s, got)
			}
			words := regexSplit(t, exprs, s)
			wordEnds := map[int]bool{}
			n := 0
			for _, w := range words {
				n += len(w)
				wordEnds[n] = true
			}
			n = 0
			tokEnds := map[int]bool{}
			for _, id := range ids {
				n += len(tok.Piece(id))
				tokEnds[n] = true
			}
			for e := range wordEnds {
				if !tokEnds[e] {
					t.Fatalf("%s: %q: a token crosses the pre-token boundary at byte %d (%q)", rule, s, e, words)
				}
			}
			if rule == preLlama3 && len(ids) != len(words) {
				t.Fatalf("llama-bpe ignores merges: %q gives %d tokens for %d pre-tokens", s, len(ids), len(words))
			}
		}
	}
}

// TestSpecialPartition: special tokens are split out longest text first,
// each at all its occurrences (llama.cpp's order); user-defined tokens are
// recognised in message text, control tokens are not.
func TestSpecialPartition(t *testing.T) {
	v := newVocabFixture("gpt2", "qwen2")
	bc := v.add("B C", tokControl, 0)
	ab := v.add("AB", tokControl, 0)
	start := v.add("<|im_start|>", tokControl, 0)
	end := v.add("<|im_end|>", tokControl, 0)
	think := v.add("<think>", tokUserDefined, 0)
	raw := v.add("Ġraw▁", tokUserDefined, 0)
	v.ids["tokenizer.ggml.eos_token_id"] = uint32(end)
	v.bools["tokenizer.ggml.add_eos_token"] = true
	tok := v.open(t)
	got := tok.Encode("AB C")
	if want := []int{tok.ids["A"], bc}; !slices.Equal(got, want) {
		t.Fatalf("AB C -> %v, want %v (the longer special first)", got, want)
	}
	if got := tok.Encode("xABy"); !slices.Contains(got, ab) {
		t.Fatalf("xABy -> %v, want AB recognised", got)
	}
	frag := tok.encodeFragments([]fragment{{text: "<|im_start|>"}, {text: "<think>"}}, nil)
	if slices.Contains(frag, start) || !slices.Contains(frag, think) {
		t.Fatalf("message text: %v: want <think> as its token and <|im_start|> as text", frag)
	}
	if piece := string(tok.Piece(think)); piece != "<think>" {
		t.Fatalf("user-defined piece %q", piece)
	}
	if piece := string(tok.Piece(raw)); piece != "Ġraw▁" {
		t.Fatalf("user-defined tokens print their raw text, as in llama.cpp: %q", piece)
	}
	if p := tok.EncodePrompt("hi"); p[len(p)-1] != end {
		t.Fatalf("add_eos_token: prompt %v does not end with EOS %d", p, end)
	}
}

// TestLlamaBPEAddsBOS: llama.cpp adds BOS for llama-bpe files that do not
// say, and a file's add_bos_token overrides it.
func TestLlamaBPEAddsBOS(t *testing.T) {
	for _, c := range []struct {
		pre     string
		set     bool
		val     bool
		wantBOS bool
	}{{"llama-bpe", false, false, true}, {"llama-bpe", true, false, false}, {"qwen2", false, false, false}, {"qwen2", true, true, true}} {
		v := newVocabFixture("gpt2", c.pre)
		bos := v.add("<|begin_of_text|>", tokControl, 0)
		v.ids["tokenizer.ggml.bos_token_id"] = uint32(bos)
		if c.set {
			v.bools["tokenizer.ggml.add_bos_token"] = c.val
		}
		p := v.open(t).EncodePrompt("hi")
		if (p[0] == bos) != c.wantBOS {
			t.Errorf("%+v: prompt %v", c, p)
		}
	}
}

// TestSPMInvalidUTF8: SentencePiece symbols are as long as their lead byte
// says, as in llama.cpp, so a broken sequence swallows the next byte
// rather than letting it merge.
func TestSPMInvalidUTF8(t *testing.T) {
	v := newVocabFixture("llama", "")
	v.add("a", tokNormal, -1)
	b := v.add("b", tokNormal, -1)
	v.add("ab", tokNormal, 0)
	v.bools["tokenizer.ggml.add_space_prefix"] = false
	v.bools["tokenizer.ggml.add_bos_token"] = false
	tok := v.open(t)
	got := tok.Encode("\xc3ab")
	want := []int{tok.byteTok[0xC3], tok.byteTok['a'], b} // "\xc3a" is one symbol, not a token: its bytes
	if !slices.Equal(got, want) {
		t.Fatalf("\\xc3ab -> %v, want %v", got, want)
	}
	if s := tok.Decode(got); s != "\xc3ab" {
		t.Fatalf("decode %q", s)
	}
}
