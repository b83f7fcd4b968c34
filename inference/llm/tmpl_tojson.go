package llm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// The Jinja engine's tojson with indent goes through encoding/json, which
// sorts object keys and escapes <, > and &; Hugging Face and llama.cpp keep
// key order and escape neither (Llama 3.x prints tool definitions this
// way). Templates are therefore rewritten before compiling so that an
// output tag `{{ X | tojson(indent=N) }}` calls tojsonIndentName instead,
// whose encoder prints what Python's json.dumps(X, indent=N,
// ensure_ascii=False) prints.
const tojsonIndentName = "__tenzro_tojson_indent"

var tojsonIndentTag = regexp.MustCompile(`\{\{(-?)\s*([^{}]+?)\s*\|\s*tojson\(\s*indent\s*=\s*(\d+)\s*\)\s*(-?)\}\}`)

// rewriteTojsonIndent applies that rewrite to template source.
func rewriteTojsonIndent(src string) string {
	return tojsonIndentTag.ReplaceAllString(src, "{{$1 "+tojsonIndentName+"($2, $3) $4}}")
}

func tojsonIndent(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 2 || !args[1].IsInt() {
		return jinja.Undefined(), fmt.Errorf("llm: tojson: want a value and an indent")
	}
	var b strings.Builder
	writeJSONIndent(&b, args[0], strings.Repeat(" ", int(args[1].AsInt())), 0)
	return jinja.NewString(b.String()), nil
}

func writeJSONIndent(b *strings.Builder, v jinja.Value, indent string, level int) {
	nl := func(l int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indent, l))
	}
	// seq writes a JSON array or object of n items, one per line.
	seq := func(open, close byte, n int, item func(i int)) {
		if n == 0 {
			b.WriteByte(open)
			b.WriteByte(close)
			return
		}
		b.WriteByte(open)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(level + 1)
			item(i)
		}
		nl(level)
		b.WriteByte(close)
	}
	switch {
	case v.IsDict():
		d := v.AsDict()
		seq('{', '}', d.Len(), func(i int) {
			writeJSONString(b, d.Keys[i])
			b.WriteString(": ")
			writeJSONIndent(b, d.Data[d.Keys[i]], indent, level+1)
		})
	case v.IsList():
		l := v.AsList()
		seq('[', ']', l.Len(), func(i int) { writeJSONIndent(b, l.Items[i], indent, level+1) })
	case v.IsString():
		writeJSONString(b, v.AsString())
	case v.IsBool():
		b.WriteString(strconv.FormatBool(v.AsBool()))
	case v.IsInt():
		b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		s := strconv.FormatFloat(v.AsFloat(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEnN") {
			s += ".0"
		}
		b.WriteString(s)
	default:
		b.WriteString("null")
	}
}

// writeJSONString quotes s as Python's json.dumps with ensure_ascii off.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
