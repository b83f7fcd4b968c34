package llm

import "strings"

// cls returns the class of the code point at i, or -1 past the piece.
func (p *preText) at(i, hi int) int {
	if i >= hi {
		return -1
	}
	return int(p.cls[i])
}

// contraction matches 's 't 're 've 'm 'll 'd at pos (ASCII letters in
// either case when fold is set); 0 when none does.
func (p *preText) contraction(pos, hi int, fold bool) int {
	if p.cps[pos] != '\'' || pos+1 >= hi {
		return 0
	}
	lower := func(r rune) rune {
		if fold && r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	switch lower(p.cps[pos+1]) {
	case 's', 't', 'm', 'd':
		return 2
	}
	if pos+2 >= hi {
		return 0
	}
	switch string([]rune{lower(p.cps[pos+1]), lower(p.cps[pos+2])}) {
	case "re", "ve", "ll":
		return 3
	}
	return 0
}

// run returns the end of the run of class c starting at i.
func (p *preText) run(i, hi, c int) int {
	for p.at(i, hi) == c {
		i++
	}
	return i
}

// spaces matches \s+(?!\S)|\s+ at pos: a whitespace run leaves its last
// character to the next piece when a non-space follows and the run has
// more than one character.
func (p *preText) spaces(pos, hi int) int {
	e := p.run(pos, hi, clsSpace)
	switch {
	case e == pos:
		return -1
	case e < hi && e-pos > 1:
		return e - 1
	}
	return e
}

// matchGPT2 is 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+.
func (p *preText) matchGPT2(pos, hi int) int {
	if n := p.contraction(pos, hi, false); n > 0 {
		return pos + n
	}
	start := pos
	if p.cps[pos] == ' ' && p.at(pos+1, hi) != clsSpace && pos+1 < hi {
		start = pos + 1
	}
	if c := p.at(start, hi); c != clsSpace {
		return p.run(start, hi, c)
	}
	return p.spaces(pos, hi)
}

// matchLlama3 is (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|
// [^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+ (llama-bpe with digits 3, qwen2 with 1).
func (p *preText) matchLlama3(digits int) matcher {
	return func(pos, hi int) int {
		if n := p.contraction(pos, hi, true); n > 0 {
			return pos + n
		}
		r, c := p.cps[pos], p.at(pos, hi)
		if c == clsLetter || (r != '\r' && r != '\n' && c != clsNumber && p.at(pos+1, hi) == clsLetter) {
			return p.run(pos+1, hi, clsLetter)
		}
		if c == clsNumber {
			e := pos + 1
			for e < pos+digits && p.at(e, hi) == clsNumber {
				e++
			}
			return e
		}
		start := pos
		if r == ' ' {
			start = pos + 1
		}
		if p.at(start, hi) == clsOther {
			e := p.run(start, hi, clsOther)
			for e < hi && (p.cps[e] == '\r' || p.cps[e] == '\n') {
				e++
			}
			return e
		}
		// \s*[\r\n]+: up to and including the run's last line break.
		e, nl := pos, -1
		for p.at(e, hi) == clsSpace {
			if p.cps[e] == '\r' || p.cps[e] == '\n' {
				nl = e
			}
			e++
		}
		if nl >= 0 {
			return nl + 1
		}
		return p.spaces(pos, hi)
	}
}

// decodeCodepoints decodes UTF-8 the way llama.cpp does: a lead byte and
// the continuation bytes it announces make one code point (overlong forms
// and surrogates included); a byte that starts no such sequence becomes
// U+FFFD on its own. Sequences above U+10FFFF, which llama.cpp cannot
// re-encode, are treated as invalid bytes too.
func decodeCodepoints(s string) []rune {
	out := make([]rune, 0, len(s))
	cont := func(i int) bool { return i < len(s) && s[i]&0xC0 == 0x80 }
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		n := 0
		switch {
		case c < 0x80:
			r, n = rune(c), 1
		case c&0x40 == 0:
		case c&0x20 == 0:
			if cont(i + 1) {
				r, n = rune(c&0x1F)<<6|rune(s[i+1]&0x3F), 2
			}
		case c&0x10 == 0:
			if cont(i+1) && cont(i+2) {
				r, n = rune(c&0x0F)<<12|rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F), 3
			}
		case c&0x08 == 0:
			if cont(i+1) && cont(i+2) && cont(i+3) {
				r, n = rune(c&0x07)<<18|rune(s[i+1]&0x3F)<<12|rune(s[i+2]&0x3F)<<6|rune(s[i+3]&0x3F), 4
			}
		}
		if n == 0 || r > 0x10FFFF {
			r, n = 0xFFFD, 1
		}
		out = append(out, r)
		i += n
	}
	return out
}

// appendCodepoint writes r as UTF-8 the way llama.cpp does, surrogates
// included (Go's encoder would turn those into U+FFFD).
func appendCodepoint(b *strings.Builder, r rune) {
	switch {
	case r < 0x80:
		b.WriteByte(byte(r))
	case r < 0x800:
		b.WriteByte(byte(0xC0 | r>>6))
		b.WriteByte(byte(0x80 | r&0x3F))
	case r < 0x10000:
		b.WriteByte(byte(0xE0 | r>>12))
		b.WriteByte(byte(0x80 | (r>>6)&0x3F))
		b.WriteByte(byte(0x80 | r&0x3F))
	default:
		b.WriteByte(byte(0xF0 | r>>18))
		b.WriteByte(byte(0x80 | (r>>12)&0x3F))
		b.WriteByte(byte(0x80 | (r>>6)&0x3F))
		b.WriteByte(byte(0x80 | r&0x3F))
	}
}
