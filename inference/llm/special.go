package llm

import "strings"

// fragment is a piece of text to tokenize; special says whether the text of
// control tokens inside it becomes those tokens. The text of user-defined
// tokens becomes those tokens everywhere, as in llama.cpp with
// parse_special off.
type fragment struct {
	text    string
	special bool
}

// part is a fragment being partitioned: text still to tokenize (id < 0) or
// a special token.
type part struct {
	text    string
	id      int
	special bool
}

// encodeFragments splits special tokens out of the fragments the way
// llama.cpp does (longest token text first, each at all its occurrences),
// joins adjacent plain text and tokenizes it; restore, if set, maps each
// plain run before tokenizing (the chat path uses it to put escaped
// message text back).
func (t *Tokenizer) encodeFragments(frags []fragment, restore func(string) string) []int {
	parts := make([]part, 0, len(frags))
	for _, fr := range frags {
		parts = append(parts, part{text: fr.text, id: -1, special: fr.special})
	}
	for _, id := range t.presentSpecials(parts) {
		parts = t.splitAt(parts, id)
	}
	var out []int
	var plain strings.Builder
	prevSpecial := true // the start of the text counts as following a special token
	flush := func() {
		if plain.Len() == 0 {
			return
		}
		s := plain.String()
		if restore != nil {
			s = restore(s)
		}
		out = append(out, t.encodePlain(s, prevSpecial)...)
		plain.Reset()
		prevSpecial = false
	}
	for _, p := range parts {
		if p.id < 0 {
			plain.WriteString(p.text)
			continue
		}
		flush()
		out = append(out, p.id)
		prevSpecial = true
	}
	flush()
	return out
}

// matchable reports whether special token id may be recognised in p.
func (t *Tokenizer) matchable(p part, id int) bool {
	return p.id < 0 && (p.special || t.types[id] == tokUserDefined)
}

// presentSpecials returns the special tokens whose text occurs where it may
// be recognised, longest text first.
func (t *Tokenizer) presentSpecials(parts []part) []int {
	found := map[int]bool{}
	for _, p := range parts {
		s := p.text
		for i := 0; i < len(s); i++ {
			if !t.specialStart[s[i]] {
				continue
			}
			for _, n := range t.specialLens {
				if i+n > len(s) {
					continue
				}
				if id, ok := t.specialText[s[i:i+n]]; ok && t.matchable(p, id) {
					found[id] = true
				}
			}
		}
	}
	var out []int
	for _, id := range t.special {
		if found[id] {
			out = append(out, id)
		}
	}
	return out
}

// splitAt splits every text part where id may be recognised at each
// occurrence of its text, left to right.
func (t *Tokenizer) splitAt(parts []part, id int) []part {
	tok := t.tokens[id]
	out := make([]part, 0, len(parts))
	for _, p := range parts {
		if !t.matchable(p, id) {
			out = append(out, p)
			continue
		}
		s := p.text
		for {
			i := strings.Index(s, tok)
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part{text: s[:i], id: -1, special: p.special})
			}
			out = append(out, part{id: id})
			s = s[i+len(tok):]
		}
		if s != "" {
			out = append(out, part{text: s, id: -1, special: p.special})
		}
	}
	return out
}
