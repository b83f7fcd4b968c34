package prefs

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParse: any bytes either parse or fail with ErrInvalid, never
// panic; what parses strictly marshals back to an object that parses to
// the same preferences.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"order":["a"],"allow_fallbacks":false}`, `{"max_price":5}`,
		`{"max_price":{"prompt":1,"image":2}}`, `{"sort":{"by":"latency"}}`, `{"preferred_max_latency":{"p50":1,"p99":2}}`,
		`{"quantizations":["Q8_0"],"data_collection":"deny","zdr":true}`, `null`, `[]`} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, strict bool) {
		p, err := Parse(raw, strict)
		if err != nil {
			return
		}
		if p.MaxPrice != nil {
			p.MaxPrice.unknown = nil
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal %+v: %v", p, err)
		}
		q, err := Parse(b, true)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if q.MaxPrice != nil {
			q.MaxPrice.unknown = nil
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed %+v into %+v (%s)", p, q, b)
		}
	})
}
