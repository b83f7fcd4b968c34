package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type echoParams struct {
	Text string `json:"text"`
}

func newTestServer() *Server {
	s := NewServer(nil)
	s.Register("test_echo", func(_ context.Context, raw json.RawMessage) (any, error) {
		p, err := Params[echoParams](raw)
		if err != nil {
			return nil, err
		}
		if p.Text == "" {
			return nil, InvalidParams("text: must not be empty")
		}
		return p.Text, nil
	})
	s.Register("test_fail", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("disk on fire") })
	s.Register("test_panic", func(context.Context, json.RawMessage) (any, error) { panic("bug") })
	return s
}

func post(t *testing.T, h http.Handler, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader(body)))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

func TestServerAnswers(t *testing.T) {
	s := newTestServer()
	cases := []struct{ name, body, want string }{
		{"call", `{"jsonrpc":"2.0","id":7,"method":"test_echo","params":{"text":"hi"}}`, `{"jsonrpc":"2.0","id":7,"result":"hi"}`},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"test_echo","params":{"text":"x"}}`, `"id":"a","result":"x"`},
		{"parse error", `{"jsonrpc":`, `"code":-32700`},
		{"not an object", `42`, `"code":-32600`},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"test_echo"}`, `"code":-32600,"message":"\"jsonrpc\" must be \"2.0\""`},
		{"no method", `{"jsonrpc":"2.0","id":1}`, `"code":-32600`},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"test_nope"}`, `"code":-32601,"message":"method \"test_nope\" not found"`},
		{"unknown param", `{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"txt":"hi"}}`, `"code":-32602`},
		{"invalid param", `{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":""}}`, `"code":-32602,"message":"text: must not be empty"`},
		{"internal", `{"jsonrpc":"2.0","id":1,"method":"test_fail"}`, `"code":-32603,"message":"disk on fire"`},
		{"panic", `{"jsonrpc":"2.0","id":1,"method":"test_panic"}`, `"code":-32603`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":"a"}},{"jsonrpc":"2.0","method":"test_echo","params":{"text":"n"}},{"jsonrpc":"2.0","id":2,"method":"x"}]`,
			`[{"jsonrpc":"2.0","id":1,"result":"a"},{"jsonrpc":"2.0","id":2,"error":{"code":-32601`},
		{"empty batch", `[]`, `"code":-32600`},
	}
	for _, c := range cases {
		code, body := post(t, s, c.body)
		if code != http.StatusOK || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %s", c.name, code, body, c.want)
		}
	}
}

func TestNotificationGetsNoBody(t *testing.T) {
	code, body := post(t, newTestServer(), `{"jsonrpc":"2.0","method":"test_echo","params":{"text":"hi"}}`)
	if code != http.StatusNoContent || body != "" {
		t.Fatalf("notification: %d %q", code, body)
	}
}

func TestOversizedBodyAndGet(t *testing.T) {
	s := newTestServer()
	code, body := post(t, s, `{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":"`+strings.Repeat("a", MaxBody)+`"}}`)
	if code != http.StatusOK || !strings.Contains(body, "-32700") || !strings.Contains(body, "exceeds") {
		t.Fatalf("oversized: %d %.200s", code, body)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/rpc", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", rec.Code)
	}
}

// FuzzServer: any body gets a JSON answer (or 204 for notifications) and
// never a panic.
func FuzzServer(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{"text":"hi"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"test_echo"},{"jsonrpc":"2.0","method":"test_fail"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"test_panic","params":[1,2]}`,
		``, `[`, `null`,
	} {
		f.Add(s)
	}
	s := newTestServer()
	f.Fuzz(func(t *testing.T, body string) {
		code, out := post(t, s, body)
		switch code {
		case http.StatusNoContent:
			if out != "" {
				t.Fatalf("204 with body %q", out)
			}
		case http.StatusOK:
			if !json.Valid([]byte(out)) {
				t.Fatalf("invalid JSON answer %q", out)
			}
		default:
			t.Fatalf("status %d", code)
		}
	})
}
