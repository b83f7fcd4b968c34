package grammar

import (
	"fmt"
	"slices"
)

// object compiles an object schema: the declared properties in declared
// order, each required one present, optional ones present or not. Keys
// the schema does not declare are never generated (additionalProperties
// only allows them); with no properties declared, additionalProperties
// (a schema, or absent/true for any value) gives the values of any keys.
func (c *compiler) object(s *object, path string, depth int) (int, error) {
	var props *object
	if p, ok := s.get("properties"); ok {
		if props, ok = p.(*object); !ok {
			return 0, fmt.Errorf("grammar: schema %s: an object of schemas", at(path, "properties"))
		}
	}
	required := map[string]bool{}
	if rv, ok := s.get("required"); ok {
		names, isArr := rv.([]any)
		if !isArr {
			return 0, fmt.Errorf("grammar: schema %s: an array of names", at(path, "required"))
		}
		for _, n := range names {
			name, isStr := n.(string)
			if !isStr {
				return 0, fmt.Errorf("grammar: schema %s: an array of names", at(path, "required"))
			}
			if props == nil || !slices.Contains(props.keys, name) {
				return 0, fmt.Errorf("grammar: schema %s: %q is not a declared property", at(path, "required"), name)
			}
			required[name] = true
		}
	}
	if props == nil || len(props.keys) == 0 {
		add, ok := s.get("additionalProperties")
		if !ok || add == true {
			return c.anyObject(), nil
		}
		if add == false {
			r := c.b.rule()
			c.b.alt(r, lit("{}"))
			return r, nil
		}
		val, err := c.node(add, at(path, "additionalProperties"), depth+1)
		if err != nil {
			return 0, err
		}
		return c.objectOf(val), nil
	}
	// first[i] and rest[i]: properties i.. with none written yet, and
	// with some written (the next one needs a comma before it).
	n := len(props.keys)
	first, rest := make([]int, n+1), make([]int, n+1)
	for i := range first {
		first[i], rest[i] = c.b.rule(), c.b.rule()
	}
	c.b.alt(first[n], nil)
	c.b.alt(rest[n], nil)
	for i := n - 1; i >= 0; i-- {
		k := props.keys[i]
		val, err := c.node(props.vals[k], at(at(path, "properties"), k), depth+1)
		if err != nil {
			return 0, err
		}
		member := seq(lit(encode(k)+":"), []part{ref(val)})
		c.b.alt(first[i], seq(member, []part{ref(rest[i+1])}))
		c.b.alt(rest[i], seq(lit(","), member, []part{ref(rest[i+1])}))
		if !required[k] {
			c.b.alt(first[i], []part{ref(first[i+1])})
			c.b.alt(rest[i], []part{ref(rest[i+1])})
		}
	}
	r := c.b.rule()
	c.b.alt(r, seq(lit("{"), []part{ref(first[0])}, lit("}")))
	return r, nil
}

// array compiles "[" (item ("," item)*)? "]"; items absent or true is any
// value.
func (c *compiler) array(s *object, path string, depth int) (int, error) {
	var item int
	if it, ok := s.get("items"); ok {
		var err error
		if item, err = c.node(it, at(path, "items"), depth+1); err != nil {
			return 0, err
		}
	} else {
		item = c.anyValue()
	}
	return c.listOf(item, "[", "]"), nil
}

// listOf is open item ("," item)* close, or open close.
func (c *compiler) listOf(item int, open, close string) int {
	more := c.b.rule()
	c.b.alt(more, seq(lit(","), []part{ref(item), ref(more)}))
	c.b.alt(more, nil)
	r := c.b.rule()
	c.b.alt(r, seq(lit(open), []part{ref(item), ref(more)}, lit(close)))
	c.b.alt(r, lit(open+close))
	return r
}

func (c *compiler) objectOf(val int) int {
	m := c.b.rule()
	c.b.alt(m, seq([]part{ref(c.scalar("string"))}, lit(":"), []part{ref(val)}))
	return c.listOf(m, "{", "}")
}

// anyObject is any JSON object.
func (c *compiler) anyObject() int {
	return c.shared("object", func(r int) { c.b.alt(r, []part{ref(c.objectOf(c.anyValue()))}) })
}

// anyValue is any JSON value.
func (c *compiler) anyValue() int {
	return c.shared("value", func(r int) {
		for _, t := range []string{"string", "number", "boolean", "null"} {
			c.b.alt(r, []part{ref(c.scalar(t))})
		}
		c.b.alt(r, []part{ref(c.anyObject())})
		c.b.alt(r, []part{ref(c.listOf(r, "[", "]"))})
	})
}

// shared returns the rule named name, defining it once (by def, which may
// refer to it).
func (c *compiler) shared(name string, def func(r int)) int {
	if r, ok := c.memo[name]; ok {
		return r
	}
	r := c.b.rule()
	c.memo[name] = r
	def(r)
	return r
}

func (c *compiler) scalar(t string) int {
	return c.shared(t, func(r int) {
		switch t {
		case "string":
			c.b.alt(r, seq(lit(`"`), []part{ref(c.stringChars())}, lit(`"`)))
		case "integer":
			c.b.alt(r, []part{ref(c.integer())})
		case "number":
			c.b.alt(r, []part{ref(c.integer()), ref(c.opt("frac", seq(lit("."), c.digits1()))), ref(c.exponent())})
		case "boolean":
			c.b.alt(r, lit("true"))
			c.b.alt(r, lit("false"))
		case "null":
			c.b.alt(r, lit("null"))
		}
	})
}

// opt is a shared rule: ps or nothing.
func (c *compiler) opt(name string, ps []part) int {
	return c.shared(name, func(r int) {
		c.b.alt(r, ps)
		c.b.alt(r, nil)
	})
}

func (c *compiler) digits() int {
	return c.shared("digits", func(r int) {
		c.b.alt(r, []part{chars(span('0', '9')), ref(r)})
		c.b.alt(r, nil)
	})
}

func (c *compiler) digits1() []part { return []part{chars(span('0', '9')), ref(c.digits())} }

func (c *compiler) integer() int {
	return c.shared("int", func(r int) {
		minus := c.opt("minus", lit("-"))
		c.b.alt(r, seq([]part{ref(minus)}, lit("0")))
		c.b.alt(r, []part{ref(minus), chars(span('1', '9')), ref(c.digits())})
	})
}

func (c *compiler) exponent() int {
	var e, sign byteSet
	e.add('e', 'e')
	e.add('E', 'E')
	sign.add('+', '+')
	sign.add('-', '-')
	s := c.opt("sign", []part{chars(sign)})
	return c.opt("exp", seq([]part{chars(e), ref(s)}, c.digits1()))
}

// stringChars is the inside of a JSON string: printable ASCII but '"' and
// '\\', escapes, and well-formed UTF-8 sequences.
func (c *compiler) stringChars() int {
	return c.shared("chars", func(r int) {
		var plain byteSet
		plain.add(0x20, 0x7f)
		plain[0] &^= 1 << '"'
		plain[1] &^= 1 << ('\\' - 64)
		var esc byteSet
		for _, e := range `"\/bfnrt` {
			esc.add(byte(e), byte(e))
		}
		var hex byteSet
		hex.add('0', '9')
		hex.add('a', 'f')
		hex.add('A', 'F')
		cont := chars(span(0x80, 0xbf))
		for _, ch := range [][]part{
			{chars(plain)},
			{chars(one('\\')), chars(esc)},
			{chars(one('\\')), chars(one('u')), chars(hex), chars(hex), chars(hex), chars(hex)},
			{chars(span(0xc2, 0xdf)), cont},
			{chars(one(0xe0)), chars(span(0xa0, 0xbf)), cont},
			{chars(span(0xe1, 0xec)), cont, cont},
			{chars(one(0xed)), chars(span(0x80, 0x9f)), cont},
			{chars(span(0xee, 0xef)), cont, cont},
			{chars(one(0xf0)), chars(span(0x90, 0xbf)), cont, cont},
			{chars(span(0xf1, 0xf3)), cont, cont, cont},
			{chars(one(0xf4)), chars(span(0x80, 0x8f)), cont, cont},
		} {
			c.b.alt(r, append(ch, ref(r)))
		}
		c.b.alt(r, nil)
	})
}
