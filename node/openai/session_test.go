package openai

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestParseSession: tenzro.session and X-Tenzro-Session, and every bad
// input a 400 naming its field.
func TestParseSession(t *testing.T) {
	h := http.Header{}
	o, e := ParseOptions(json.RawMessage(`{"session":{"continuity":"required","jurisdiction":"Europe"}}`), h)
	if e != nil || o.Session == nil || o.Session.Continuity != ContinuityRequired || o.Session.Jurisdiction != "Europe" || o.Session.ID != "" {
		t.Fatalf("%+v %v", o.Session, e)
	}
	o, e = ParseOptions(json.RawMessage(`{"session":{"id":"abc_1","continuity":true}}`), h)
	if e != nil || o.Session.ID != "abc_1" || o.Session.Continuity != ContinuityOn {
		t.Fatalf("%+v %v", o.Session, e)
	}
	h.Set("X-Tenzro-Session", "abc-2")
	o, e = ParseOptions(nil, h)
	if e != nil || o.Session == nil || o.Session.ID != "abc-2" || o.Session.Continuity != ContinuityOff {
		t.Fatalf("header only: %+v %v", o.Session, e)
	}
	o, e = ParseOptions(json.RawMessage(`{"session":{"continuity":false}}`), h)
	if e != nil || o.Session.ID != "abc-2" {
		t.Fatalf("header ID into the body's session: %+v %v", o.Session, e)
	}
	for _, c := range []struct {
		body, header, param string
	}{
		{`{"session":{"continuity":"yes"}}`, "", "tenzro.session.continuity"},
		{`{"session":{"continuity":1}}`, "", "tenzro.session.continuity"},
		{`{"session":{"id":"a b"}}`, "", "tenzro.session.id"},
		{`{"session":{"id":"` + strings.Repeat("x", 65) + `"}}`, "", "tenzro.session.id"},
		{`{"session":{"jurisdiction":"DE-BY"}}`, "", "tenzro.session.jurisdiction"},
		{`{"session":{"jurisdiction":"Atlantis"}}`, "", "tenzro.session.jurisdiction"},
		{`{"session":{"turn":3}}`, "", "tenzro"},
		{`{"session":"abc"}`, "", "tenzro"},
		{``, "bad/id", "X-Tenzro-Session"},
		{`{"session":{"id":"one"}}`, "two", "X-Tenzro-Session"},
	} {
		h := http.Header{}
		if c.header != "" {
			h.Set("X-Tenzro-Session", c.header)
		}
		_, e := ParseOptions(json.RawMessage(c.body), h)
		if e == nil || e.Status != http.StatusBadRequest || e.Param != c.param || e.Message == "" {
			t.Errorf("%s / %q: %+v, want 400 on %s", c.body, c.header, e, c.param)
		}
	}
	b, err := json.Marshal(SessionOptions{ID: "x", Continuity: ContinuityRequired})
	if err != nil || string(b) != `{"id":"x","continuity":"required"}` {
		t.Fatalf("%s %v", b, err)
	}
}

// FuzzParseOptions: any tenzro object and session header parse to options
// or a 400 naming a field; never a panic, and a session that parses has a
// valid ID (or none) and a known continuity.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{`{"session":{"id":"a","continuity":"required","jurisdiction":"DE"}}`, `{"session":{"continuity":true}}`,
		`{"strategy":"price","session":null}`, `{"session":{"continuity":"x"}}`, `null`, `{`,
		`{"order":["a"],"max_price":{"prompt":1},"sort":"throughput"}`, `{"max_price":5,"quantizations":["q8_0"]}`} {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "sess-1")
	}
	f.Fuzz(func(t *testing.T, raw []byte, header string) {
		h := http.Header{}
		h.Set("X-Tenzro-Session", header)
		o, e := ParseOptions(raw, h)
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Param == "" || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if s := o.Session; s != nil {
			if s.ID != "" && checkSessionID(s.ID) != nil {
				t.Fatalf("accepted session id %q", s.ID)
			}
			switch s.Continuity {
			case ContinuityOff, ContinuityOn, ContinuityRequired:
			default:
				t.Fatalf("continuity %q", s.Continuity)
			}
		}
	})
}
