package llm

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/grammar"
)

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	tokNormal      = 1
	tokUnknown     = 2
	tokControl     = 3
	tokUserDefined = 4
	tokUnused      = 5
	tokByte        = 6
)

// maxVocab bounds the vocabulary a file may declare.
const maxVocab = 1 << 21

// Tokenizer turns text into token IDs and back, following the model's GGUF
// tokenizer metadata: "llama" (SentencePiece BPE with scores and byte
// fallback) or "gpt2" (byte-level BPE with merges).
type Tokenizer struct {
	kind         string // "llama" or "gpt2"
	pre          string // tokenizer.ggml.pre, "gpt-2" spelt the GGUF way; "" if absent
	rule         string // the pre-tokenizer rule pre selects (gpt2 models)
	tokens       []string
	types        []int32
	scores       []float32
	ids          map[string]int
	merges       map[string]int // gpt2: "left right" -> rank
	special      []int          // control and user-defined tokens, longest text first
	specialStart [256]bool      // first bytes of special tokens
	specialText  map[string]int // special token of each text (the first listed)
	specialLens  []int          // distinct lengths of special token texts, longest first
	byteTok      [256]int       // token of each byte (spm <0xXX>, gpt2 single-byte symbol), -1 if none

	bos, eos, unk  int
	addBOS, addEOS bool
	addSpacePrefix bool
	eog            map[int]bool

	mu    sync.Mutex
	cache map[string][]int

	// grammar is the vocabulary a response format's mask reads, built on
	// first use (constrain_grammar.go).
	grammarOnce sync.Once
	grammar     *grammar.Vocab
}

// eogNames are end-of-generation tokens recognised by their text.
var eogNames = []string{"<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|end_of_text|>"}

// NewTokenizer builds the tokenizer described by f's metadata.
func NewTokenizer(f *gguf.File) (*Tokenizer, error) {
	t := &Tokenizer{bos: -1, eos: -1, unk: -1, eog: map[int]bool{}, cache: map[string][]int{}}
	kind, ok, err := f.String("tokenizer.ggml.model")
	if err != nil || !ok {
		return nil, fmt.Errorf("llm: tokenizer: tokenizer.ggml.model missing or invalid: %w", err)
	}
	if kind != "llama" && kind != "gpt2" {
		return nil, fmt.Errorf("llm: tokenizer: unsupported tokenizer model %q (want llama or gpt2)", kind)
	}
	t.kind = kind
	if t.tokens, ok, err = f.Strings("tokenizer.ggml.tokens"); err != nil || !ok || len(t.tokens) == 0 {
		return nil, fmt.Errorf("llm: tokenizer: tokenizer.ggml.tokens missing or invalid: %w", err)
	}
	n := len(t.tokens)
	if n > maxVocab {
		return nil, fmt.Errorf("llm: tokenizer: %d tokens exceed the limit of %d", n, maxVocab)
	}
	if types, ok, err := f.Ints("tokenizer.ggml.token_type"); err != nil {
		return nil, fmt.Errorf("llm: tokenizer: %w", err)
	} else if ok {
		if len(types) != n {
			return nil, fmt.Errorf("llm: tokenizer: %d token types for %d tokens", len(types), n)
		}
		t.types = make([]int32, n)
		for i, ty := range types {
			t.types[i] = int32(ty)
		}
	} else {
		t.types = make([]int32, n)
		for i := range t.types {
			t.types[i] = tokNormal
		}
	}
	if scores, ok, err := f.Float32s("tokenizer.ggml.scores"); err != nil {
		return nil, fmt.Errorf("llm: tokenizer: %w", err)
	} else if ok && len(scores) != n {
		return nil, fmt.Errorf("llm: tokenizer: %d scores for %d tokens", len(scores), n)
	} else {
		t.scores = scores
	}
	if kind == "llama" && t.scores == nil {
		return nil, errors.New("llm: tokenizer: a llama tokenizer needs tokenizer.ggml.scores")
	}
	t.ids = make(map[string]int, n)
	for i, s := range t.tokens {
		if _, dup := t.ids[s]; !dup {
			t.ids[s] = i
		}
	}
	if t.pre, err = preTokenizer(f); err != nil {
		return nil, err
	}
	t.rule = ruleOf(t.pre)
	if kind == "gpt2" {
		if err := t.loadMerges(f); err != nil {
			return nil, err
		}
	}
	if err := t.loadSpecial(f); err != nil {
		return nil, err
	}
	t.initBytes()
	return t, nil
}

func (t *Tokenizer) loadMerges(f *gguf.File) error {
	merges, ok, err := f.Strings("tokenizer.ggml.merges")
	if err != nil || !ok {
		return fmt.Errorf("llm: tokenizer: tokenizer.ggml.merges missing or invalid: %w", err)
	}
	t.merges = make(map[string]int, len(merges))
	for i, m := range merges {
		l, r, found := strings.Cut(m, " ")
		if !found || l == "" || r == "" {
			return fmt.Errorf("llm: tokenizer: merge %d %q is not two symbols", i, m)
		}
		if _, dup := t.merges[m]; !dup {
			t.merges[m] = i
		}
	}
	return nil
}

func (t *Tokenizer) loadSpecial(f *gguf.File) error {
	n := len(t.tokens)
	id := func(key string, def int) (int, error) {
		v, ok, err := f.Uint(key)
		if err != nil {
			return 0, fmt.Errorf("llm: tokenizer: %w", err)
		}
		if !ok {
			return def, nil
		}
		if v >= uint64(n) {
			return 0, fmt.Errorf("llm: tokenizer: %s = %d is outside the vocabulary of %d", key, v, n)
		}
		return int(v), nil
	}
	var err error
	if t.bos, err = id("tokenizer.ggml.bos_token_id", -1); err != nil {
		return err
	}
	if t.eos, err = id("tokenizer.ggml.eos_token_id", -1); err != nil {
		return err
	}
	if t.unk, err = id("tokenizer.ggml.unknown_token_id", -1); err != nil {
		return err
	}
	eot, err := id("tokenizer.ggml.eot_token_id", -1)
	if err != nil {
		return err
	}
	// llama.cpp's defaults: SentencePiece and Llama 3's rule add BOS (the
	// latter only where the file names one); a file's own add_bos_token /
	// add_eos_token override them.
	t.addBOS = t.kind == "llama" || (t.kind == "gpt2" && t.rule == preLlama3 && t.bos >= 0)
	if b, ok, err := f.Bool("tokenizer.ggml.add_bos_token"); err != nil {
		return fmt.Errorf("llm: tokenizer: %w", err)
	} else if ok {
		t.addBOS = b
	}
	if b, ok, err := f.Bool("tokenizer.ggml.add_eos_token"); err != nil {
		return fmt.Errorf("llm: tokenizer: %w", err)
	} else if ok {
		t.addEOS = b
	}
	if t.addBOS && t.bos < 0 {
		return errors.New("llm: tokenizer: add_bos_token is set but there is no bos_token_id")
	}
	if t.addEOS && t.eos < 0 {
		return errors.New("llm: tokenizer: add_eos_token is set but there is no eos_token_id")
	}
	t.addSpacePrefix = t.kind == "llama"
	if b, ok, err := f.Bool("tokenizer.ggml.add_space_prefix"); err != nil {
		return fmt.Errorf("llm: tokenizer: %w", err)
	} else if ok {
		t.addSpacePrefix = b
	}
	for _, e := range []int{t.eos, eot} {
		if e >= 0 {
			t.eog[e] = true
		}
	}
	for i, ty := range t.types {
		if (ty == tokControl || ty == tokUserDefined) && t.tokens[i] != "" {
			t.special = append(t.special, i)
		}
	}
	sort.SliceStable(t.special, func(a, b int) bool { return len(t.tokens[t.special[a]]) > len(t.tokens[t.special[b]]) })
	// Lookups by text and length keep matching cheap for vocabularies with
	// thousands of special tokens (Gemma's <unusedN>).
	t.specialText = make(map[string]int, len(t.special))
	for _, id := range t.special {
		s := t.tokens[id]
		t.specialStart[s[0]] = true
		if _, dup := t.specialText[s]; !dup {
			t.specialText[s] = id
		}
		if n := len(t.specialLens); n == 0 || t.specialLens[n-1] != len(s) {
			t.specialLens = append(t.specialLens, len(s))
		}
	}
	for _, name := range eogNames {
		if i, ok := t.ids[name]; ok && t.types[i] == tokControl {
			t.eog[i] = true
		}
	}
	return nil
}

func (t *Tokenizer) initBytes() {
	for b := range t.byteTok {
		t.byteTok[b] = -1
		var s string
		if t.kind == "llama" {
			s = fmt.Sprintf("<0x%02X>", b)
		} else {
			s = string(byteToRune[b])
		}
		if id, ok := t.ids[s]; ok {
			t.byteTok[b] = id
		}
	}
}

// VocabSize returns the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// Kind returns "llama" or "gpt2".
func (t *Tokenizer) Kind() string { return t.kind }

// Pre returns the pre-tokenizer name (tokenizer.ggml.pre) in the GGUF
// spelling, or "" when the file names none.
func (t *Tokenizer) Pre() string { return t.pre }

// preTokenizer reads tokenizer.ggml.pre. Files written by earlier tenzrod
// versions spell GPT-2's pattern "gpt2"; llama.cpp and the GGUF ecosystem
// spell it "gpt-2". Both read as "gpt-2".
func preTokenizer(f *gguf.File) (string, error) {
	pre, ok, err := f.String("tokenizer.ggml.pre")
	if err != nil {
		return "", fmt.Errorf("llm: tokenizer: tokenizer.ggml.pre: %w", err)
	}
	if !ok {
		return "", nil
	}
	if pre == "gpt2" {
		pre = "gpt-2"
	}
	return pre, nil
}

// BOS returns the beginning-of-sequence token, or -1.
func (t *Tokenizer) BOS() int { return t.bos }

// IsEOG reports whether id ends a generation (EOS, end-of-turn).
func (t *Tokenizer) IsEOG(id int) bool { return t.eog[id] }

// Encode tokenizes text, turning the text of control and user-defined
// tokens into those tokens. It never adds BOS.
func (t *Tokenizer) Encode(text string) []int {
	return t.encodeFragments([]fragment{{text: text, special: true}}, nil)
}

// encodePlain tokenizes text without special tokens; atStart says whether
// the text starts the input or follows a special token (SentencePiece then
// prefixes a space when add_space_prefix is set).
func (t *Tokenizer) encodePlain(text string, atStart bool) []int {
	if t.kind == "llama" {
		return t.encodeSPM(text, atStart && t.addSpacePrefix)
	}
	return t.encodeBPE(text)
}

// Decode returns the text of ids as a standalone string: control tokens
// are dropped and a SentencePiece leading space is removed.
func (t *Tokenizer) Decode(ids []int) string {
	var b []byte
	for _, id := range ids {
		b = append(b, t.Piece(id)...)
	}
	if t.kind == "llama" && t.addSpacePrefix && len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return string(b)
}

// Piece returns the bytes a token contributes to output text (empty for
// control tokens and out-of-range IDs).
func (t *Tokenizer) Piece(id int) []byte {
	if id < 0 || id >= len(t.tokens) {
		return nil
	}
	switch t.types[id] {
	case tokControl, tokUnused:
		return nil
	case tokUserDefined:
		// llama.cpp prints user-defined tokens as their raw text, with
		// neither byte-level decoding nor "▁" unescaping.
		return []byte(t.tokens[id])
	}
	if t.kind == "llama" {
		return t.pieceSPM(id)
	}
	return t.pieceBPE(id)
}
