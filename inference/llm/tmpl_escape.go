package llm

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// Escape marks: code points of Supplementary Private Use Area-A stand for
// escaped strings while a template renders.
const (
	markBase = 0xF0000
	markSpan = 0xFFFE
)

// escaper replaces control-token text (and the mark code points
// themselves) in untrusted strings by marks, and puts the strings back.
type escaper struct {
	t     *Tokenizer
	table []string
	index map[string]rune
	err   error
}

func newEscaper(t *Tokenizer) *escaper {
	return &escaper{t: t, index: map[string]rune{}}
}

func (e *escaper) mark(s string) rune {
	if r, ok := e.index[s]; ok {
		return r
	}
	if len(e.table) >= markSpan {
		e.err = errors.New("llm: chat: too many distinct escaped strings")
		return utf8.RuneError
	}
	r := rune(markBase + len(e.table))
	e.table = append(e.table, s)
	e.index[s] = r
	return r
}

func isMark(r rune) bool { return r >= markBase && r < markBase+markSpan }

// controlAt returns the longest control token whose text starts s, or -1.
func (t *Tokenizer) controlAt(s string) int {
	if s == "" || !t.specialStart[s[0]] {
		return -1
	}
	for _, n := range t.specialLens {
		if n > len(s) {
			continue
		}
		if id, ok := t.specialText[s[:n]]; ok && t.types[id] == tokControl {
			return id
		}
	}
	return -1
}

// escape returns s with control-token text and mark code points replaced
// by marks.
func (e *escaper) escape(s string) string {
	return rewrite(s, func(rest string) (string, int) {
		if id := e.t.controlAt(rest); id >= 0 {
			return string(e.mark(e.t.tokens[id])), len(e.t.tokens[id])
		}
		if r, n := utf8.DecodeRuneInString(rest); isMark(r) {
			return string(e.mark(rest[:n])), n
		}
		return "", 0
	})
}

// restore puts the escaped strings back into s.
func (e *escaper) restore(s string) string {
	if len(e.table) == 0 {
		return s
	}
	return rewrite(s, func(rest string) (string, int) {
		if r, n := utf8.DecodeRuneInString(rest); isMark(r) && int(r-markBase) < len(e.table) {
			return e.table[r-markBase], n
		}
		return "", 0
	})
}

// rewrite scans s rune by rune; where repl returns a length n > 0 for the
// text at that point, the n bytes there are replaced by its string.
func rewrite(s string, repl func(rest string) (string, int)) string {
	var b strings.Builder
	done := 0
	for i := 0; i < len(s); {
		if r, n := repl(s[i:]); n > 0 {
			b.WriteString(s[done:i])
			b.WriteString(r)
			i += n
			done = i
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// templateDate is the date templates print (strftime_now): Llama 3.1's own
// default, so prompts do not depend on the day they are encoded.
var templateDate = time.Date(2024, time.July, 26, 0, 0, 0, 0, time.UTC)

// fixedStrftime is strftime_now(format) at templateDate, for the
// directives chat templates use.
func fixedStrftime(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	format := "%Y-%m-%d"
	if len(args) > 0 && args[0].IsString() {
		format = args[0].AsString()
	}
	layouts := map[byte]string{
		'd': "02", 'm': "01", 'y': "06", 'Y': "2006", 'b': "Jan", 'B': "January",
		'a': "Mon", 'A': "Monday", 'H': "15", 'M': "04", 'S': "05", 'p': "PM",
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		switch l, ok := layouts[format[i]]; {
		case ok:
			b.WriteString(templateDate.Format(l))
		case format[i] == '%':
			b.WriteByte('%')
		case format[i] == '-' && i+1 < len(format) && format[i+1] == 'd':
			i++
			b.WriteString(templateDate.Format("2"))
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return jinja.NewString(b.String()), nil
}
