package llm

import (
	"unicode"
	"unicode/utf8"
)

// byteToRune is GPT-2's bytes_to_unicode table: every byte maps to a
// printable rune, so byte-level BPE works on printable strings.
var byteToRune, runeToByte = func() ([256]rune, map[rune]byte) {
	var b2r [256]rune
	r2b := make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		r := rune(b)
		if !printable {
			r = rune(256 + n)
			n++
		}
		b2r[b] = r
		r2b[r] = byte(b)
	}
	return b2r, r2b
}()

// ByteLevel maps raw bytes to GPT-2's printable byte-level alphabet.
func ByteLevel(s string) string {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, byteToRune[s[i]])
	}
	return string(out)
}

const maxCache = 1 << 14

// encodeBPE splits text with GPT-2's pre-tokenizer and merges each word by
// merge rank.
func (t *Tokenizer) encodeBPE(text string) []int {
	var out []int
	for _, w := range PreTokenize(text) {
		out = append(out, t.encodeWord(w)...)
	}
	return out
}

func (t *Tokenizer) encodeWord(w string) []int {
	t.mu.Lock()
	ids, ok := t.cache[w]
	t.mu.Unlock()
	if ok {
		return ids
	}
	mapped := ByteLevel(w)
	bounds := make([]int, 0, len(mapped)+1)
	for i := range mapped {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(mapped))
	syms := mergeSymbols(mapped, bounds, func(l, r string) (float64, bool) {
		rank, ok := t.merges[l+" "+r]
		return float64(rank), ok
	})
	for _, s := range syms {
		piece := mapped[s[0]:s[1]]
		if id, ok := t.ids[piece]; ok {
			ids = append(ids, id)
			continue
		}
		for _, r := range piece {
			if id := t.byteTok[runeToByte[r]]; id >= 0 {
				ids = append(ids, id)
			} else if t.unk >= 0 {
				ids = append(ids, t.unk)
			}
		}
	}
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		clear(t.cache)
	}
	t.cache[w] = ids
	t.mu.Unlock()
	return ids
}

// pieceBPE returns the output bytes of a byte-level token.
func (t *Tokenizer) pieceBPE(id int) []byte {
	s := t.tokens[id]
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if b, ok := runeToByte[r]; ok {
			out = append(out, b)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

// PreTokenize splits text like GPT-2's pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func PreTokenize(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		n := matchAt(text[i:])
		out = append(out, text[i:i+n])
		i += n
	}
	return out
}

func runeClass(r rune) int {
	switch {
	case unicode.IsLetter(r):
		return 1
	case unicode.IsNumber(r):
		return 2
	case unicode.IsSpace(r):
		return 3
	}
	return 4
}

// matchAt returns the length of the pre-token at the start of s (> 0).
func matchAt(s string) int {
	if s[0] == '\'' {
		for _, c := range []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"} {
			if len(s) >= len(c) && s[:len(c)] == c {
				return len(c)
			}
		}
	}
	r, size := utf8.DecodeRuneInString(s)
	start := 0
	if r == ' ' && size < len(s) {
		if r2, _ := utf8.DecodeRuneInString(s[size:]); runeClass(r2) != 3 {
			start, r = size, r2
		}
	}
	class := runeClass(r)
	if class != 3 {
		end := start
		for end < len(s) {
			r, n := utf8.DecodeRuneInString(s[end:])
			if runeClass(r) != class {
				break
			}
			end += n
		}
		return end
	}
	// A whitespace run: leave its last character to the next token when a
	// non-space follows and the run is longer than one character.
	end, last := 0, 0
	for end < len(s) {
		r, n := utf8.DecodeRuneInString(s[end:])
		if runeClass(r) != 3 {
			break
		}
		last = end
		end += n
	}
	if end < len(s) && last > 0 {
		return last
	}
	return end
}
