package prefs

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestParseOpenRouterShape: OpenRouter's object as its clients send it
// parses with its meanings; unknown fields (and price dimensions this node
// does not price) are ignored in a lax parse and refused in a strict one.
func TestParseOpenRouterShape(t *testing.T) {
	raw := []byte(`{"order":["a","b"],"only":["a"],"ignore":["c"],"allow_fallbacks":false,"require_parameters":true,
		"data_collection":"DENY","zdr":true,"quantizations":["INT8","fp16"],"sort":{"by":"throughput","partition":"model"},
		"max_price":{"prompt":1,"completion":2,"request":3,"image":4},"preferred_min_throughput":{"p90":50},
		"preferred_max_latency":3,"experimental":{"x":1}}`)
	p, err := Parse(raw, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Fallbacks() || !p.RequireParameters || !p.NoRetention() || p.Sort != SortThroughput ||
		!reflect.DeepEqual(p.Quantizations, []string{"int8", "fp16"}) || *p.MaxPrice.Prompt != 1 || *p.MaxPrice.Completion != 2 ||
		*p.MaxPrice.Request != 3 || p.MaxPrice.Total != nil {
		t.Fatalf("parsed %+v", p)
	}
	if v, ok := p.PreferredMinThroughput.Tail(); !ok || v != 50 {
		t.Fatalf("throughput tail %v %v", v, ok)
	}
	if v, ok := p.PreferredMaxLatency.Typical(); !ok || v != 3 {
		t.Fatalf("latency typical %v %v", v, ok)
	}
	if _, err := Parse(raw, true); !errors.Is(err, ErrInvalid) {
		t.Fatalf("strict parse of unknown fields: %v", err)
	}
	if _, err := Parse([]byte(`{"max_price":{"image":4}}`), true); !errors.Is(err, ErrInvalid) {
		t.Fatalf("strict parse of an unknown price dimension: %v", err)
	}
	for _, bad := range []string{`{"sort":"speed"}`, `{"data_collection":"maybe"}`, `{"order":[""]}`,
		`{"max_price":{"prompt":1.5}}`, `{"max_price":-1}`, `{"preferred_max_latency":-1}`, `{"only":"a"}`, `{} {}`} {
		if _, err := Parse([]byte(bad), false); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", bad, err)
		}
	}
	p, err = Parse([]byte(`{"max_price":7}`), true)
	if err != nil || *p.MaxPrice.Total != 7 {
		t.Fatalf("a bare max_price is the total: %+v %v", p, err)
	}
	if b, _ := json.Marshal(p); string(b) != `{"max_price":7}` {
		t.Fatalf("marshalled %s", b)
	}
}

// TestQuantClass: GGUF file types map to OpenRouter's classes, and a
// preference admits an offer by either name.
func TestQuantClass(t *testing.T) {
	for in, want := range map[string]string{"f32": "fp32", "F16": "fp16", "bf16": "bf16", "q8_0": "int8",
		"q4_k_m": "int4", "iq2_xs": "int2", "": "unknown", "mxfp": "unknown"} {
		if got := QuantClass(in); got != want {
			t.Errorf("QuantClass(%q) = %q, want %q", in, got, want)
		}
	}
	p := &Preferences{Quantizations: []string{"fp16", "q4_k_m"}}
	if p.AllowsQuant("q8_0") || !p.AllowsQuant("f16") || !p.AllowsQuant("q4_k_m") || p.AllowsQuant("q4_0") || p.AllowsQuant("") {
		t.Fatal("quantizations [fp16 q4_k_m] admitted the wrong offers")
	}
	if !(*Preferences)(nil).AllowsQuant("q8_0") {
		t.Fatal("no preference must admit every offer")
	}
}
