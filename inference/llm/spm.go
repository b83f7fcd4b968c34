package llm

import (
	"strings"
)

// encodeSPM tokenizes text the way llama.cpp's SentencePiece tokenizer
// does: spaces become "▁", adjacent pieces merge by highest vocabulary score
// while the merged piece exists, and pieces not in the vocabulary fall back
// to byte tokens.
func (t *Tokenizer) encodeSPM(text string, spacePrefix bool) []int {
	if spacePrefix {
		text = " " + text
	}
	text = strings.ReplaceAll(text, " ", "▁")
	if text == "" {
		return nil
	}
	// Symbols are as long as their lead byte announces, unchecked, as in
	// llama.cpp: invalid UTF-8 then comes out as byte tokens the same way.
	bounds := make([]int, 0, len(text)+1)
	for i := 0; i < len(text); i += utf8Len(text[i]) {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(text))
	syms := mergeSymbols(text, bounds, func(l, r string) (float64, bool) {
		id, ok := t.ids[l+r]
		if !ok || t.types[id] == tokControl || t.types[id] == tokByte {
			return 0, false
		}
		return -float64(t.scores[id]), true
	})
	out := make([]int, 0, len(syms))
	for _, s := range syms {
		piece := text[s[0]:s[1]]
		if id, ok := t.ids[piece]; ok && t.types[id] != tokControl {
			out = append(out, id)
			continue
		}
		for i := 0; i < len(piece); i++ {
			switch {
			case t.byteTok[piece[i]] >= 0:
				out = append(out, t.byteTok[piece[i]])
			case t.unk >= 0:
				out = append(out, t.unk)
			}
		}
	}
	return out
}

// pieceSPM returns the output bytes of a SentencePiece token.
func (t *Tokenizer) pieceSPM(id int) []byte {
	s := t.tokens[id]
	if t.types[id] == tokByte {
		if len(s) == 6 && strings.HasPrefix(s, "<0x") && s[5] == '>' {
			if b, ok := hexByte(s[3], s[4]); ok {
				return []byte{b}
			}
		}
		return nil
	}
	if !strings.Contains(s, "▁") {
		return []byte(s)
	}
	return []byte(strings.ReplaceAll(s, "▁", " "))
}

func hexByte(hi, lo byte) (byte, bool) {
	h, ok1 := hexDigit(hi)
	l, ok2 := hexDigit(lo)
	return h<<4 | l, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// utf8Len is the sequence length a UTF-8 lead byte announces (1 for
// continuation bytes), llama.cpp's unicode_len_utf8.
func utf8Len(c byte) int {
	switch c >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}
