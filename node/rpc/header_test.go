package rpc

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHeaderReachesMethods: a method sees the HTTP request's headers; its
// CodeUnauthorized answer to a single call is HTTP 401 with a Bearer
// challenge, and inside a batch an error object like any other.
func TestHeaderReachesMethods(t *testing.T) {
	s := NewServer(nil)
	s.Register("test_whoami", func(ctx context.Context, _ json.RawMessage) (any, error) {
		if tok := Header(ctx).Get("Authorization"); tok != "Bearer good" {
			return nil, Unauthorized("no good token")
		}
		return "you", nil
	})
	call := func(auth, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	const one = `{"jsonrpc":"2.0","id":1,"method":"test_whoami"}`
	if rec := call("Bearer good", one); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"result":"you"`) {
		t.Fatalf("with the token: %d %s", rec.Code, rec.Body)
	}
	rec := call("", one)
	if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") ||
		!strings.Contains(rec.Body.String(), `"code":-32001`) {
		t.Fatalf("without the token: %d %q %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	if rec := call("", "["+one+"]"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"code":-32001`) {
		t.Fatalf("a batch without the token: %d %s", rec.Code, rec.Body)
	}
	if h := Header(context.Background()); len(h) != 0 {
		t.Fatalf("outside a request: %v", h)
	}
}
