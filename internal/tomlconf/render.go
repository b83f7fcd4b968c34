package tomlconf

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// commentWidth is where comment text wraps.
const commentWidth = 78

var durationType = reflect.TypeOf(time.Duration(0))

// tomlField is one key of a table: the struct field behind it.
type tomlField struct {
	key     string
	comment string
	example string
	v       reflect.Value
}

// tomlWriter renders one struct tree as commented TOML.
type tomlWriter struct {
	buf bytes.Buffer
	// omit reports tables (by dotted path) left out of the file.
	omit func(path string) bool
}

// Render writes v, a struct, as commented TOML after header. omit, if
// set, names the tables (by dotted path, e.g. "router.buyers") to leave
// out: a caller leaves out only what equals the defaults it loads over.
func Render(header string, v any, omit func(path string) bool) ([]byte, error) {
	w := &tomlWriter{omit: omit}
	if w.omit == nil {
		w.omit = func(string) bool { return false }
	}
	w.comment(header)
	w.buf.WriteString("\n")
	if err := w.table(nil, reflect.ValueOf(v), ""); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// fields lists a struct's keys in declaration order, flattening embedded
// structs without a key of their own as the TOML decoder does.
func fields(v reflect.Value) []tomlField {
	var out []tomlField
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, fields(v.Field(i))...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, tomlField{key: name, comment: f.Tag.Get("comment"), example: f.Tag.Get("example"), v: v.Field(i)})
	}
	return out
}

// IsTable reports whether a field of type t is written as a [table]: a
// struct, but not a duration.
func IsTable(t reflect.Type) bool { return t.Kind() == reflect.Struct && t != durationType }

// IsTableArray reports whether a field of type t is written as an
// [[array of tables]]: a slice of structs.
func IsTableArray(t reflect.Type) bool { return t.Kind() == reflect.Slice && IsTable(t.Elem()) }

// table writes v's plain keys, then its tables, then its arrays of tables:
// TOML puts every key after a header into that header's table, so a
// table's own keys must all come before its first sub-table. prefix is ""
// or "# " for a commented-out example entry.
func (w *tomlWriter) table(path []string, v reflect.Value, prefix string) error {
	fs := fields(v)
	for _, f := range fs {
		if IsTable(f.v.Type()) || IsTableArray(f.v.Type()) {
			continue
		}
		val, err := tomlValue(f.v)
		if err != nil {
			return fmt.Errorf("tomlconf: %s: %w", dotted(path, f.key), err)
		}
		w.comment(f.comment)
		p := prefix
		if f.example != "" && f.v.IsZero() {
			p, val = "# ", tomlString(f.example)
		}
		fmt.Fprintf(&w.buf, "%s%s = %s\n", p, tomlKey(f.key), val)
	}
	for _, f := range fs {
		if !IsTable(f.v.Type()) {
			continue
		}
		sub := append(append([]string(nil), path...), f.key)
		if w.omit(dotted(path, f.key)) {
			continue
		}
		w.buf.WriteString("\n")
		w.comment(f.comment)
		fmt.Fprintf(&w.buf, "%s[%s]\n", prefix, headerPath(sub))
		if err := w.table(sub, f.v, prefix); err != nil {
			return err
		}
	}
	for _, f := range fs {
		if !IsTableArray(f.v.Type()) {
			continue
		}
		sub := append(append([]string(nil), path...), f.key)
		if w.omit(dotted(path, f.key)) {
			continue
		}
		entries, p := f.v, prefix
		if f.v.Len() == 0 {
			// One commented-out zero entry shows the keys an entry takes.
			entries, p = reflect.MakeSlice(f.v.Type(), 1, 1), "# "
		}
		for i := range entries.Len() {
			w.buf.WriteString("\n")
			w.comment(f.comment)
			fmt.Fprintf(&w.buf, "%s[[%s]]\n", p, headerPath(sub))
			if err := w.table(sub, entries.Index(i), p); err != nil {
				return err
			}
		}
	}
	return nil
}

// comment writes text as # lines, wrapped at commentWidth; in a
// commented-out entry it reads the same.
func (w *tomlWriter) comment(text string) {
	if text == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "  ") {
			fmt.Fprintf(&w.buf, "#%s\n", line)
			continue
		}
		cur := ""
		for _, word := range strings.Fields(line) {
			if cur != "" && 2+len(cur)+1+len(word) > commentWidth {
				fmt.Fprintf(&w.buf, "# %s\n", cur)
				cur = ""
			}
			if cur != "" {
				cur += " "
			}
			cur += word
		}
		fmt.Fprintf(&w.buf, "# %s\n", cur)
	}
}

func dotted(path []string, key string) string {
	return strings.Join(append(append([]string(nil), path...), key), ".")
}

func headerPath(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = tomlKey(p)
	}
	return strings.Join(parts, ".")
}

// tomlKey writes a bare key when TOML allows one, else a quoted key.
func tomlKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return tomlString(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// tomlValue writes one value: a scalar, a duration (as "30s", which Decode
// reads back) or an array of them.
func tomlValue(v reflect.Value) (string, error) {
	if v.Type() == durationType {
		return tomlString(time.Duration(v.Int()).String()), nil
	}
	switch v.Kind() {
	case reflect.String:
		return tomlString(v.String()), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() > math.MaxInt64 {
			return "", fmt.Errorf("%d is beyond TOML's integers", v.Uint())
		}
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return tomlFloat(v.Float()), nil
	case reflect.Slice, reflect.Array:
		items := make([]string, v.Len())
		for i := range v.Len() {
			s, err := tomlValue(v.Index(i))
			if err != nil {
				return "", err
			}
			items[i] = s
		}
		return "[" + strings.Join(items, ", ") + "]", nil
	}
	return "", fmt.Errorf("type %s has no TOML form here", v.Type())
}

// tomlFloat writes v as a TOML float (always with a point or exponent).
func tomlFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// tomlString writes a TOML basic string. Go's strconv.Quote is not one:
// it may write \x escapes, which TOML lacks.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString(`\uFFFD`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
