package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/node/nodetest"
)

// touchReader fails the test's check if anything reads it.
type touchReader struct {
	read bool
	src  *strings.Reader
}

func (r *touchReader) Read(p []byte) (int, error) { r.read = true; return r.src.Read(p) }

const okChat = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`

func serve(h *Handler, req *http.Request) *httptest.ResponseRecorder {
	mux := http.NewServeMux()
	h.Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec
}

func errorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct {
		Error Error `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" {
		t.Fatalf("%d: not an error object: %q", rec.Code, rec.Body.String())
	}
	return e.Error.Code
}

// TestAuthBeforeBody: a refused request is answered without a byte of its
// body read; a plain error is a 401, an *Error keeps its status.
func TestAuthBeforeBody(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{errors.New("no token"), http.StatusUnauthorized, "invalid_api_key"},
		{&Error{Status: http.StatusForbidden, Type: "permission_error", Code: "banned", Message: "banned"}, http.StatusForbidden, "banned"},
	} {
		for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
			body := &touchReader{src: strings.NewReader(okChat)}
			h := NewHandler(echoBackend{t}, WithAuth(func(*http.Request) error { return c.err }))
			rec := serve(h, httptest.NewRequest(http.MethodPost, path, body))
			if rec.Code != c.status || errorCode(t, rec) != c.code || body.read {
				t.Errorf("%s %v: %d %q, body read %v", path, c.err, rec.Code, rec.Body.String(), body.read)
			}
		}
	}
	h := NewHandler(echoBackend{t}, WithAuth(func(*http.Request) error { return nil }))
	if rec := serve(h, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(okChat))); rec.Code != http.StatusOK {
		t.Fatalf("allowed: %d %s", rec.Code, rec.Body.String())
	}
}

// TestBearerSchemeCaseInsensitive: the auth hook (and so the backend) sees
// one canonical spelling whatever case and spacing the client used.
func TestBearerSchemeCaseInsensitive(t *testing.T) {
	var seen string
	h := NewHandler(echoBackend{t}, WithAuth(func(r *http.Request) error {
		seen = r.Header.Get("Authorization")
		if seen != "Bearer sk-1" {
			return errors.New("bad token")
		}
		return nil
	}))
	for auth, want := range map[string]int{
		"Bearer sk-1": 200, "bearer sk-1": 200, "BEARER   sk-1  ": 200, "  bEaReR\tsk-1": 401,
		"Basic sk-1": 401, "Bearersk-1": 401, "Bearer ": 401, "Bearer sk-1 sk-2": 401, "": 401,
	} {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(okChat))
		req.Header.Set("Authorization", auth)
		if rec := serve(h, req); rec.Code != want {
			t.Errorf("Authorization %q (hook saw %q): %d, want %d", auth, seen, rec.Code, want)
		}
	}
}

func TestBearerToken(t *testing.T) {
	for auth, want := range map[string]string{
		"Bearer abc": "abc", "bearer abc": "abc", "BEARER  abc\t": "abc", " Bearer abc": "abc",
		"Bearer": "", "Bearer  ": "", "Token abc": "", "Bearer a b": "", "Bearer\tabc": "",
	} {
		h := http.Header{}
		h.Set("Authorization", auth)
		got, ok := BearerToken(h)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", auth, got, ok, want)
		}
	}
}

// TestBodyCap: a declared length over the cap is a 413 before any read; an
// undeclared (chunked) one is cut at the cap; a server-side read refusal is
// a 503 with Retry-After, a client's broken body a 400.
func TestBodyCap(t *testing.T) {
	h := NewHandler(echoBackend{t}, WithMaxBody(int64(len(okChat))))
	if rec := serve(h, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(okChat))); rec.Code != 200 {
		t.Fatalf("body at the cap: %d %s", rec.Code, rec.Body.String())
	}
	big := okChat + " "
	body := &touchReader{src: strings.NewReader(big)}
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", body)
	req.ContentLength = int64(len(big))
	if rec := serve(h, req); rec.Code != http.StatusRequestEntityTooLarge || errorCode(t, rec) != "request_too_large" || body.read {
		t.Fatalf("declared over the cap: %d %s, read %v", rec.Code, rec.Body.String(), body.read)
	}
	req = httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(big))
	req.ContentLength = -1
	if rec := serve(h, req); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked over the cap: %d %s", rec.Code, rec.Body.String())
	}
	rec := serve(h, httptest.NewRequest(http.MethodPost, "/v1/completions", nodetest.FailingBody(nodetest.ErrBusy)))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("temporary read error: %d %s", rec.Code, rec.Body.String())
	}
	if rec := serve(h, httptest.NewRequest(http.MethodPost, "/v1/completions", nodetest.FailingBody(errors.New("reset")))); rec.Code != http.StatusBadRequest {
		t.Fatalf("broken body: %d %s", rec.Code, rec.Body.String())
	}
	if h := NewHandler(echoBackend{t}, WithMaxBody(MaxBody*2)); h.maxBody != MaxBody {
		t.Fatalf("WithMaxBody raised the cap to %d", h.maxBody)
	}
}

// FuzzBearerToken: a token found is non-empty, has no blanks, and is found
// again in its canonical spelling.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  abc ", "Basic x", "Bearer", "", " \t", "BEARER a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, auth string) {
		h := http.Header{"Authorization": {auth}}
		tok, ok := BearerToken(h)
		if !ok {
			if tok != "" {
				t.Fatalf("%q: token %q without ok", auth, tok)
			}
			return
		}
		if tok == "" || strings.ContainsAny(tok, " \t") {
			t.Fatalf("%q: token %q", auth, tok)
		}
		again, ok := BearerToken(http.Header{"Authorization": {"Bearer " + tok}})
		if !ok || again != tok {
			t.Fatalf("%q: canonical form gives %q %v", auth, again, ok)
		}
	})
}

// WithMaxBody caps a request body below the default MaxBody.
func WithMaxBody(n int64) HandlerOption {
	return func(h *Handler) {
		if n > 0 && n < h.maxBody {
			h.maxBody = n
		}
	}
}
