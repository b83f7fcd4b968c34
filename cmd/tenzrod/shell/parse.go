package shell

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// token is one word of a command line: its unquoted text and the byte span
// [start, end) it came from, so a command may read the raw text (JSON).
type token struct {
	text       string
	start, end int
	quoted     bool
}

// tokenize splits a line like a POSIX shell does for plain words: blanks
// separate words, '…' is literal, "…" honours \" and \\, and a backslash
// outside quotes escapes the next character.
func tokenize(line string) ([]token, error) {
	var (
		toks []token
		cur  strings.Builder
		in   bool
		tok  token
	)
	flush := func(end int) {
		if in {
			tok.text, tok.end = cur.String(), end
			toks = append(toks, tok)
			cur.Reset()
			in = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			flush(i)
			continue
		}
		if !in {
			in, tok = true, token{start: i}
		}
		switch c {
		case '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated ' quote")
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			tok.quoted = true
		case '"':
			tok.quoted = true
			closed := false
			for i++; i < len(line); i++ {
				if line[i] == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					i++
				} else if line[i] == '"' {
					closed = true
					break
				}
				cur.WriteByte(line[i])
			}
			if !closed {
				return nil, errors.New(`unterminated " quote`)
			}
		case '\\':
			if i+1 < len(line) {
				i++
				tok.quoted = true
			}
			cur.WriteByte(line[i])
		default:
			cur.WriteByte(c)
		}
	}
	flush(len(line))
	return toks, nil
}

// invocation is one parsed command line.
type invocation struct {
	cmd   *command
	line  string
	args  []token // positional arguments after the command's name
	json  bool
	flags map[string]string
}

func (inv *invocation) arg(i int) string { return inv.args[i].text }

// intFlag returns the value of an integer flag, or def when it was not given.
func (inv *invocation) intFlag(name string, def int) (int, error) {
	v, ok := inv.flags[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("-%s %q: not an integer", name, v)
	}
	return n, nil
}

func (inv *invocation) boolFlag(name string) bool {
	_, ok := inv.flags[name]
	return ok
}

// parse turns a command line into an invocation; (nil, nil) for a blank line.
func (r *registry) parse(line string) (*invocation, error) {
	toks, err := tokenize(line)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, nil
	}
	cmd, n, err := r.lookup(toks)
	if err != nil {
		return nil, err
	}
	inv := &invocation{cmd: cmd, line: line, flags: map[string]string{}}
	rest := toks[n:]
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		if t.quoted || len(t.text) < 2 || t.text[0] != '-' {
			inv.args = append(inv.args, t)
			continue
		}
		if t.text == "--" {
			inv.args = append(inv.args, rest[i+1:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(t.text, "-"), "=")
		if name == "json" && !cmd.noJSON {
			inv.json = true
			continue
		}
		f := cmd.flag(name)
		switch {
		case f == nil && cmd.lenientFlags:
			inv.args = append(inv.args, t)
		case f == nil:
			return nil, fmt.Errorf("unknown flag %q for %q (see \"help %s\")", t.text, cmd.name, cmd.name)
		case f.value == "":
			inv.flags[name] = ""
		case hasValue:
			inv.flags[name] = value
		case i+1 < len(rest):
			i++
			inv.flags[name] = rest[i].text
		default:
			return nil, fmt.Errorf("flag %s needs a value %s (usage: %s)", t.text, f.value, cmd.usage())
		}
	}
	if len(inv.args) < cmd.minArgs || (cmd.maxArgs >= 0 && len(inv.args) > cmd.maxArgs) {
		return nil, fmt.Errorf("usage: %s", cmd.usage())
	}
	return inv, nil
}

// lookup finds the command named by the longest run of leading words.
func (r *registry) lookup(toks []token) (*command, int, error) {
	var best *command
	bestN := 0
	for _, c := range r.cmds {
		words := strings.Fields(c.name)
		if len(words) > len(toks) || len(words) <= bestN {
			continue
		}
		match := true
		for i, w := range words {
			if toks[i].text != w {
				match = false
				break
			}
		}
		if match {
			best, bestN = c, len(words)
		}
	}
	if best != nil {
		return best, bestN, nil
	}
	if subs := r.nextWords([]string{toks[0].text}); len(subs) > 0 {
		given := toks[0].text
		if len(toks) > 1 {
			given += " " + toks[1].text
		}
		return nil, 0, fmt.Errorf("unknown command %q: %q has %s", given, toks[0].text, strings.Join(subs, ", "))
	}
	return nil, 0, fmt.Errorf("unknown command %q (type \"help\" for the list of commands)", toks[0].text)
}

// nextWords lists the words that may follow prefix in a command name.
func (r *registry) nextWords(prefix []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range r.cmds {
		if c.hidden {
			continue
		}
		words := strings.Fields(c.name)
		if len(words) <= len(prefix) {
			continue
		}
		ok := true
		for i, p := range prefix {
			if words[i] != p {
				ok = false
				break
			}
		}
		if w := words[len(prefix)]; ok && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
