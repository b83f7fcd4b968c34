package llm

import "unicode/utf8"

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

// encodeBPE splits text with the file's pre-tokenizer rule and merges each
// pre-token by merge rank.
func (t *Tokenizer) encodeBPE(text string) []int {
	var out []int
	for _, w := range splitRule(t.rule, text) {
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
	if id, ok := t.ids[mapped]; ok && ignoresMerges(t.rule) {
		ids = []int{id}
	} else {
		ids = t.mergeWord(mapped)
	}
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		clear(t.cache)
	}
	t.cache[w] = ids
	t.mu.Unlock()
	return ids
}

// mergeWord merges a byte-level word by merge rank. A final symbol missing
// from the vocabulary falls back, as in llama.cpp, to the tokens of its
// single bytes where those exist.
func (t *Tokenizer) mergeWord(mapped string) []int {
	var ids []int
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
		for i := 0; i < len(piece); i++ {
			if id, ok := t.ids[piece[i:i+1]]; ok {
				ids = append(ids, id)
			}
		}
	}
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

// PreTokenize splits text with GPT-2's pre-tokenizer rule.
func PreTokenize(text string) []string { return splitRule(preGPT2, text) }
