package openai

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/router/gateway"
)

// TestRoutingPrefs: the provider object is read leniently, the same
// fields in tenzro strictly; preferences in both places are a 400 except
// max_price (X-Tenzro-Max-Price), whose dimensions the object leaves out
// come from tenzro.
func TestRoutingPrefs(t *testing.T) {
	h := http.Header{}
	h.Set("X-Tenzro-Max-Price", "900")
	o, e := ParseOptions(json.RawMessage(`{"strategy":"price"}`), h)
	if e != nil || *o.MaxPrice.Total != 900 {
		t.Fatalf("header max price: %+v %v", o, e)
	}
	p, e := routingPrefs([]byte(`{"ignore":["x"],"max_price":{"prompt":3},"future_field":true}`), o.Preferences)
	if e != nil || p.Ignore[0] != "x" || *p.MaxPrice.Prompt != 3 || *p.MaxPrice.Total != 900 {
		t.Fatalf("merged %+v %v", p, e)
	}
	o, e = ParseOptions(json.RawMessage(`{"only":["y"],"max_price":{"completion":4}}`), http.Header{})
	if e != nil || o.Only[0] != "y" || *o.MaxPrice.Completion != 4 {
		t.Fatalf("tenzro preferences: %+v %v", o, e)
	}
	if p, e := routingPrefs(nil, o.Preferences); e != nil || p.Only[0] != "y" {
		t.Fatalf("from tenzro alone: %+v %v", p, e)
	}
	if _, e := routingPrefs([]byte(`{"ignore":["x"]}`), o.Preferences); e == nil || e.Param != "provider" {
		t.Fatalf("preferences in both places: %v", e)
	}
	if p, e := routingPrefs([]byte(`null`), Options{}.Preferences); e != nil || p != nil {
		t.Fatalf("none: %+v %v", p, e)
	}
	for _, bad := range []string{`{"only":["y"],"bogus":1}`, `{"sort":"speed"}`, `{"max_price":{"image":1}}`} {
		if _, e := ParseOptions(json.RawMessage(bad), http.Header{}); e == nil || e.Status != http.StatusBadRequest {
			t.Errorf("tenzro %s: %v, want 400", bad, e)
		}
	}
	if _, e := routingPrefs([]byte(`{"sort":"speed"}`), Options{}.Preferences); e == nil || e.Param != "provider" {
		t.Errorf("a bad provider object: %v", e)
	}
}

// TestErrorCarriesExcluded: a gateway 503 naming excluded providers is
// sent with the body's tenzro.excluded beside the error.
func TestErrorCarriesExcluded(t *testing.T) {
	rec := httptest.NewRecorder()
	writeError(rec, asError(openaiError(&gateway.Error{Status: http.StatusServiceUnavailable, Code: "no_provider", Message: "m",
		Excluded: []gateway.Exclusion{{Provider: "p", Reason: "ignore: x"}}})))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"tenzro":{"excluded":[{"provider":"p","reason":"ignore: x"}]}`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
