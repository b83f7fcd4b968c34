package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// object is a JSON object with its keys in the order written: properties
// are generated in the order the schema declares them.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// maxNesting bounds the nesting of a schema document.
const maxNesting = 64

// decode reads one JSON value, objects as *object and numbers as
// json.Number, refusing duplicate keys and trailing data.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("grammar: schema: data after the value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("grammar: schema: nested deeper than %d", maxNesting)
	}
	t, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("grammar: schema: %w", err)
	}
	switch t {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("grammar: schema: %w", err)
			}
			k, _ := kt.(string)
			if _, dup := o.vals[k]; dup {
				return nil, fmt.Errorf("grammar: schema: duplicate key %q", k)
			}
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k)
			o.vals[k] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("grammar: schema: %w", err)
		}
		return o, nil
	case json.Delim('['):
		var a []any
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("grammar: schema: %w", err)
		}
		if a == nil {
			a = []any{}
		}
		return a, nil
	}
	return t, nil
}

// encode writes v as compact JSON, keys in their written order and
// without HTML escaping (the literal a const or enum value generates).
func encode(v any) string {
	var b bytes.Buffer
	encodeTo(&b, v)
	return b.String()
}

func encodeTo(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeTo(b, k)
			b.WriteByte(':')
			encodeTo(b, v.vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeTo(b, x)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(v.String())
	case nil:
		b.WriteString("null")
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v) // strings and booleans cannot fail
		b.Truncate(b.Len() - 1)
	}
}
