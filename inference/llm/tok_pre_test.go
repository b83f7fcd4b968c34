package llm

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2/v2"
)

// ruleRegexes are the regexes llama.cpp's src/llama-vocab.cpp applies for
// each rule, in order (each splits the pieces the previous one left).
var ruleRegexes = map[string][]string{
	preGPT2:   {`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`},
	preLlama3: {`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
	preQwen2:  {`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
	preSmolLM: {`\p{N}`, `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`},
	preDefault: {`[\p{P}\$\+<=>\^~\|]+`, `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`,
		`\p{N}+`, `[0-9][0-9][0-9]`},
}

// preCorpus covers what the rules treat differently: contractions in both
// cases, digit runs, whitespace runs before words and line breaks, CJK,
// emoji, combining marks, code, non-ASCII spaces and invalid UTF-8.
var preCorpus = []string{
	"Hello world, the quick brown fox jumps over the lazy dog.",
	"I'M sure you're right, it's WE'LL or THEY'D or 'Ve 'rE",
	"numbers 1234567 and 3.14159, prices $9.99! ٣٤٥ Ⅻ ½",
	"  leading spaces and trailing  ",
	"line one\nline two\n\n\tindented\r\n  \r\n   x\t\t\ty   \n",
	"unicode: héllo wörld, Ελληνικά, русский, العربية, עברית, हिन्दी",
	"日本語のテキストと中文文本，한국어 텍스트。",
	"emoji 🙂🙂 and 👩‍👩‍👧 family, flags 🇫🇷 and ✨",
	"func main() {\n\tx := []int{1, 2, 3}\n\tfmt.Println(x[0]+x[1]) // sum\n}\n",
	"if (a<=b && c!=d) { return a^b|c~d; } `code` @decorator #tag",
	"non-breaking\u00a0space, ideographic\u3000space, nel\u0085here, zwsp\u200bthere",
	"e\u0301 combining a\u0308 marks",
	"invalid \xff\xfe bytes \xc3( and \xe2\x82 truncated \xf0\x9f\x99",
	"overlong \xc0\xaf surrogate \xed\xa0\x80 big \xf4\x90\x80\x80 end",
	"'s'S's'", "   ", "\n", "x", "a  b", "?!'", " '", "1 2  3   4",
	"\r\r\n\n ", "abc\u0300def", "tab\there", "\x1c\x1d\x1e\x1f sep",
}

var regexCache sync.Map

func compiledRegex(expr string) *regexp2.Regexp {
	if re, ok := regexCache.Load(expr); ok {
		return re.(*regexp2.Regexp) //nolint:forcetypeassert // the cache holds only compiled regexes
	}
	re := regexp2.MustCompile(expr, regexp2.None)
	regexCache.Store(expr, re)
	return re
}

// regexSplit splits text as llama.cpp's regex iteration does: each match
// of each regex in turn is a piece, and so is each run between matches.
func regexSplit(t testing.TB, exprs []string, text string) []string {
	cps := decodeCodepoints(text)
	ends := []int{len(cps)}
	if len(cps) == 0 {
		return nil
	}
	for _, expr := range exprs {
		re := compiledRegex(expr)
		var out []int
		lo := 0
		for _, hi := range ends {
			chunk := cps[lo:hi]
			prev := 0
			m, err := re.FindRunesMatch(chunk)
			for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
				if m.RuneIndex > prev {
					out = append(out, lo+m.RuneIndex)
				}
				out = append(out, lo+m.RuneIndex+m.RuneLength)
				prev = m.RuneIndex + m.RuneLength
			}
			if err != nil {
				t.Fatal(err)
			}
			if prev < len(chunk) {
				out = append(out, hi)
			}
			lo = hi
		}
		ends = out
	}
	var words []string
	start := 0
	for _, e := range ends {
		var b strings.Builder
		for _, r := range cps[start:e] {
			appendCodepoint(&b, r)
		}
		words = append(words, b.String())
		start = e
	}
	return words
}

// checkRules compares every rule's splitter with its regexes on text.
func checkRules(t testing.TB, text string) {
	for rule, exprs := range ruleRegexes {
		got, want := splitRule(rule, text), regexSplit(t, exprs, text)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %q splits as\n%q\nwant\n%q", rule, text, got, want)
		}
	}
}

func TestPreTokenizerRulesMatchRegexes(t *testing.T) {
	for _, s := range preCorpus {
		checkRules(t, s)
	}
	checkRules(t, strings.Join(preCorpus, " "))
}

// TestPreTokenizerRulesDiffer pins what tells the rules apart, so a rule
// wired to the wrong name shows.
func TestPreTokenizerRulesDiffer(t *testing.T) {
	cases := []struct {
		rule, text string
		want       []string
	}{
		{preGPT2, "I'M 12345", []string{"I", "'", "M", " 12345"}},
		{preLlama3, "I'M 12345", []string{"I", "'M", " ", "123", "45"}},
		{preQwen2, "I'M 123", []string{"I", "'M", " ", "1", "2", "3"}},
		{preSmolLM, "a 123", []string{"a", " ", "1", "2", "3"}},
		{preDefault, "a, 12345!", []string{"a", ",", " ", "123", "45", "!"}},
		{preLlama3, "x  \n\ny", []string{"x", "  \n\n", "y"}},
		{preGPT2, "x  \n\ny", []string{"x", "  \n", "\n", "y"}},
		{preLlama3, "bad\xffbyte", []string{"bad", "\uFFFDbyte"}},
	}
	for _, c := range cases {
		if got := splitRule(c.rule, c.text); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q splits as %q, want %q", c.rule, c.text, got, c.want)
		}
	}
	if ruleOf("") != preDefault || ruleOf("no-such-pre") != preDefault || ruleOf("qwen2") != preQwen2 {
		t.Error("ruleOf: missing or unknown names must take the default rule, as in llama.cpp")
	}
}

// FuzzPreTokenizerRules checks every rule against its regexes on
// arbitrary text, invalid UTF-8 included.
func FuzzPreTokenizerRules(f *testing.F) {
	for _, s := range preCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		checkRules(t, s)
	})
}

// BenchmarkPreTokenizeRules compares the hand-written splitters with
// regexp2 running the same regexes (the choice in tok_pre.go).
func BenchmarkPreTokenizeRules(b *testing.B) {
	text := strings.Repeat(strings.Join(preCorpus, " "), 4)
	for _, rule := range []string{preGPT2, preLlama3, preQwen2, preDefault} {
		b.Run(rule+"/hand", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				splitRule(rule, text)
			}
		})
		b.Run(rule+"/regexp2", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				regexSplit(b, ruleRegexes[rule], text)
			}
		})
	}
}
