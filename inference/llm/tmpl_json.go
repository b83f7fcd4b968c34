package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ardanlabs/jinja"
)

// jsonValue decodes one JSON value into template values, keeping object
// key order (templates print tools and arguments with tojson, and the
// order a client sent is the order llama.cpp prints) and passing every
// string, keys included, through str.
func jsonValue(raw json.RawMessage, str func(string) string) (jinja.Value, error) {
	if len(raw) == 0 {
		return jinja.NewDict(), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeJSONValue(dec, str, 0)
	if err != nil {
		return jinja.Undefined(), err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return jinja.Undefined(), errors.New("llm: json: trailing data")
	}
	return v, nil
}

// maxJSONDepth bounds nesting in untrusted tool definitions.
const maxJSONDepth = 64

func decodeJSONValue(dec *json.Decoder, str func(string) string, depth int) (jinja.Value, error) {
	if depth > maxJSONDepth {
		return jinja.Undefined(), errors.New("llm: json: nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return jinja.Undefined(), fmt.Errorf("llm: json: %w", err)
	}
	switch x := tok.(type) {
	case json.Delim:
		switch x {
		case '{':
			d := jinja.NewDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jinja.Undefined(), fmt.Errorf("llm: json: %w", err)
				}
				k, _ := kt.(string)
				v, err := decodeJSONValue(dec, str, depth+1)
				if err != nil {
					return jinja.Undefined(), err
				}
				d.AsDict().Set(str(k), v)
			}
			_, err = dec.Token()
			return d, err
		case '[':
			var items []jinja.Value
			for dec.More() {
				v, err := decodeJSONValue(dec, str, depth+1)
				if err != nil {
					return jinja.Undefined(), err
				}
				items = append(items, v)
			}
			_, err = dec.Token()
			return jinja.NewList(items), err
		}
		return jinja.Undefined(), fmt.Errorf("llm: json: unexpected %v", x)
	case string:
		return jinja.NewString(str(x)), nil
	}
	return jinja.FromGoValue(tok), nil
}
