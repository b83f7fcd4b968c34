package llm

import (
	"bytes"
	"unicode/utf8"
)

// textStream releases generated text as it becomes final: text that might
// still turn out to begin a stop sequence, or an incomplete UTF-8 character,
// is held back until the next token decides it.
type textStream struct {
	stops   [][]byte
	pending []byte
}

func newTextStream(stops []string) *textStream {
	ts := &textStream{}
	for _, s := range stops {
		ts.stops = append(ts.stops, []byte(s))
	}
	return ts
}

// push adds a token's bytes and returns the text now final; stopped reports
// that a stop sequence was found (its text and everything after it are
// dropped).
func (ts *textStream) push(piece []byte) (out string, stopped bool) {
	ts.pending = append(ts.pending, piece...)
	first := -1
	for _, s := range ts.stops {
		if i := bytes.Index(ts.pending, s); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first >= 0 {
		out = string(ts.pending[:first])
		ts.pending = ts.pending[:0]
		return out, true
	}
	keep := 0
	for _, s := range ts.stops {
		for n := min(len(s)-1, len(ts.pending)); n > keep; n-- {
			if bytes.HasSuffix(ts.pending, s[:n]) {
				keep = n
				break
			}
		}
	}
	keep = max(keep, incompleteTail(ts.pending))
	cut := len(ts.pending) - keep
	out = string(ts.pending[:cut])
	ts.pending = append(ts.pending[:0], ts.pending[cut:]...)
	return out, false
}

// flush releases whatever is held back (at the end of the generation).
func (ts *textStream) flush() string {
	out := string(ts.pending)
	ts.pending = ts.pending[:0]
	return out
}

// incompleteTail returns the length of a trailing UTF-8 sequence that has
// started but not finished.
func incompleteTail(b []byte) int {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}
