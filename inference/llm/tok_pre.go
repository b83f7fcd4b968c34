package llm

import (
	"strings"
	"unicode"
)

// Pre-tokenizer rules, one per tokenizer.ggml.pre family llama.cpp knows.
// Each rule is the sequence of regexes llama.cpp applies (each regex splits
// the pieces the previous one left), written as hand-made matchers that do
// what the regex does, lookahead included: Go's regexp has no lookahead, and
// a backtracking engine (regexp2) was 3-11x slower on the same corpus (see
// BenchmarkPreTokenizeRules). tok_pre_test.go checks every rule against
// regexp2 running llama.cpp's regex strings.
const (
	preGPT2    = "gpt-2"     // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
	preLlama3  = "llama-bpe" // (?:'[sS]|…)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	preQwen2   = "qwen2"     // as llama-bpe with \p{N} one digit at a time
	preSmolLM  = "smollm"    // \p{N}, then gpt-2
	preDefault = "default"   // [\p{P}\$\+<=>\^~\|]+, then gpt-2, then \p{N}+, then [0-9][0-9][0-9]
)

// preRules maps tokenizer.ggml.pre names to the rule llama.cpp applies
// (several names share a rule, as in llama.cpp's vocabulary loader).
var preRules = map[string]string{
	"gpt-2": preGPT2, "phi-2": preGPT2, "mpt": preGPT2, "olmo": preGPT2, "jais": preGPT2, "exaone4": preGPT2,
	"llama-bpe": preLlama3, "llama3": preLlama3, "llama-v3": preLlama3, "falcon3": preLlama3,
	"dbrx": preLlama3, "smaug-bpe": preLlama3, "pixtral": preLlama3,
	"qwen2": preQwen2, "deepseek-r1-qwen": preQwen2, "stablelm2": preQwen2, "megrez": preQwen2, "hunyuan": preQwen2,
	"smollm": preSmolLM, "starcoder": preSmolLM, "refact": preSmolLM, "command-r": preSmolLM, "codeshell": preSmolLM,
	"exaone": preSmolLM, "minerva-7b": preSmolLM,
	"default": preDefault,
}

// ruleOf returns the rule for a tokenizer.ggml.pre value; like llama.cpp,
// a missing or unknown name gets the default rule.
func ruleOf(pre string) string {
	if r, ok := preRules[pre]; ok {
		return r
	}
	return preDefault
}

// ignoresMerges reports whether a rule emits a pre-token that is itself in
// the vocabulary as that token without merging (llama.cpp's ignore_merges).
func ignoresMerges(rule string) bool { return rule == preLlama3 }

// Character classes, as llama.cpp's category flags give them.
const (
	clsOther = iota
	clsLetter
	clsNumber
	clsSpace
)

// cpClass classifies a code point: \p{L}, \p{N}, \s (Unicode White_Space,
// which is what llama.cpp's whitespace set and regex engines' \s hold) or
// anything else (marks, punctuation, symbols, controls, surrogates,
// unassigned).
func cpClass(r rune) uint8 {
	switch {
	case r < 0x80:
		return asciiClass[r]
	case unicode.IsSpace(r):
		return clsSpace
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	}
	return clsOther
}

var asciiClass = func() (t [0x80]uint8) {
	for r := range t {
		t[r] = clsOther
		switch {
		case unicode.IsSpace(rune(r)):
			t[r] = clsSpace
		case unicode.IsLetter(rune(r)):
			t[r] = clsLetter
		case unicode.IsNumber(rune(r)):
			t[r] = clsNumber
		}
	}
	return t
}()

// preText is text decoded to code points the way llama.cpp decodes it,
// with each code point's class.
type preText struct {
	cps []rune
	cls []uint8
}

func newPreText(s string) *preText {
	p := &preText{cps: decodeCodepoints(s)}
	p.cls = make([]uint8, len(p.cps))
	for i, r := range p.cps {
		p.cls[i] = cpClass(r)
	}
	return p
}

// splitRule splits text into pre-tokens by rule. Invalid UTF-8 bytes come
// out as U+FFFD each, as in llama.cpp (the pre-tokens are re-encoded from
// code points).
func splitRule(rule, text string) []string {
	p := newPreText(text)
	ends := []int{len(p.cps)}
	if len(p.cps) == 0 {
		return nil
	}
	switch rule {
	case preLlama3:
		ends = p.pass(ends, p.matchLlama3(3))
	case preQwen2:
		ends = p.pass(ends, p.matchLlama3(1))
	case preSmolLM:
		ends = p.pass(ends, p.matchRun(func(i int) bool { return p.cls[i] == clsNumber }, 1))
		ends = p.pass(ends, p.matchGPT2)
	case preDefault:
		ends = p.pass(ends, p.matchRun(func(i int) bool { return isDefaultPunct(p.cps[i]) }, 0))
		ends = p.pass(ends, p.matchGPT2)
		ends = p.pass(ends, p.matchRun(func(i int) bool { return p.cls[i] == clsNumber }, 0))
		ends = p.pass(ends, p.matchDigits3)
	default:
		ends = p.pass(ends, p.matchGPT2)
	}
	// One buffer holds every piece; the pieces are slices of it.
	var b strings.Builder
	b.Grow(len(text) + 2*len(p.cps))
	for _, r := range p.cps {
		appendCodepoint(&b, r)
	}
	all := b.String()
	out := make([]string, 0, len(ends))
	start, off := 0, 0
	for _, e := range ends {
		n := 0
		for _, r := range p.cps[start:e] {
			n += codepointLen(r)
		}
		out = append(out, all[off:off+n])
		start, off = e, off+n
	}
	return out
}

// codepointLen is the length appendCodepoint writes for r.
func codepointLen(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

// matcher returns the end of the match starting at pos within [pos, hi),
// or -1 when nothing matches there.
type matcher func(pos, hi int) int

// pass re-splits every piece (given by its end offset) with m, as
// llama.cpp's regex iteration does: each match is a piece, and so is each
// run of text between matches.
func (p *preText) pass(ends []int, m matcher) []int {
	out := make([]int, 0, len(ends)*2)
	lo := 0
	for _, hi := range ends {
		gap := lo
		for pos := lo; pos < hi; {
			e := m(pos, hi)
			if e <= pos {
				pos++
				continue
			}
			if gap < pos {
				out = append(out, pos)
			}
			out = append(out, e)
			pos, gap = e, e
		}
		if gap < hi {
			out = append(out, hi)
		}
		lo = hi
	}
	return out
}

// isDefaultPunct is the class [\p{P}\$\+<=>\^~\|] of the default rule.
func isDefaultPunct(r rune) bool {
	return unicode.IsPunct(r) || strings.ContainsRune("$+<=>^~|", r)
}

// matchRun matches X+ (max 0) or X{1,max} for a class X.
func (p *preText) matchRun(in func(i int) bool, max int) matcher {
	return func(pos, hi int) int {
		e := pos
		for e < hi && in(e) && (max == 0 || e-pos < max) {
			e++
		}
		if e == pos {
			return -1
		}
		return e
	}
}

// matchDigits3 matches [0-9][0-9][0-9].
func (p *preText) matchDigits3(pos, hi int) int {
	if pos+3 > hi {
		return -1
	}
	for i := pos; i < pos+3; i++ {
		if p.cps[i] < '0' || p.cps[i] > '9' {
			return -1
		}
	}
	return pos + 3
}
