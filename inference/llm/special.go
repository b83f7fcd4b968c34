package llm

import "strings"

// fragment is a piece of text to tokenize; special says whether the text of
// special tokens inside it becomes those tokens.
type fragment struct {
	text    string
	special bool
}

// encodeFragments splits special tokens out of the fragments that allow
// them, joins adjacent plain text and tokenizes it.
func (t *Tokenizer) encodeFragments(frags []fragment) []int {
	var out []int
	var plain strings.Builder
	prevSpecial := true // the start of the text counts as following a special token
	flush := func() {
		if plain.Len() == 0 {
			return
		}
		out = append(out, t.encodePlain(plain.String(), prevSpecial)...)
		plain.Reset()
		prevSpecial = false
	}
	for _, fr := range frags {
		s := fr.text
		for s != "" {
			at, id := len(s), -1
			if fr.special {
				at, id = t.findSpecial(s)
			}
			plain.WriteString(s[:at])
			if id < 0 {
				break
			}
			flush()
			out = append(out, id)
			prevSpecial = true
			s = s[at+len(t.tokens[id]):]
		}
	}
	flush()
	return out
}

// findSpecial returns the first position of a special token in s and its
// ID (the longest one at that position), or len(s), -1.
func (t *Tokenizer) findSpecial(s string) (int, int) {
	for i := 0; i < len(s); i++ {
		if !t.specialStart[s[i]] {
			continue
		}
		for _, id := range t.special {
			if strings.HasPrefix(s[i:], t.tokens[id]) {
				return i, id
			}
		}
	}
	return len(s), -1
}
