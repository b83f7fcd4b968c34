package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, mux *http.ServeMux, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

// TestPageAndAssets: the page and every asset it names are served with
// the CSP and their content types; nothing else is.
func TestPageAndAssets(t *testing.T) {
	mux := http.NewServeMux()
	Mount(mux)
	resp := get(t, mux, http.MethodGet, "/")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		resp.Header.Get("Content-Security-Policy") != CSP || !strings.Contains(CSP, "default-src 'self'") {
		t.Fatalf("GET /: %d %v", resp.StatusCode, resp.Header)
	}
	refs := regexp.MustCompile(`(?:src|href)="(/[^"]*)"`).FindAllStringSubmatch(string(body), -1)
	if len(refs) < 4 {
		t.Fatalf("the page names %d assets", len(refs))
	}
	types := map[string]string{".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
	for _, r := range refs {
		a := get(t, mux, http.MethodGet, r[1])
		ext := r[1][strings.LastIndex(r[1], "."):]
		if a.StatusCode != http.StatusOK || !strings.HasPrefix(a.Header.Get("Content-Type"), types[ext]) || a.Header.Get("Content-Security-Policy") != CSP {
			t.Fatalf("GET %s: %d %v", r[1], a.StatusCode, a.Header)
		}
	}
	if strings.Contains(string(body), "<script>") || strings.Contains(string(body), "http://") || strings.Contains(string(body), "https://") {
		t.Fatal("the page has inline script or names another origin")
	}
	for path, want := range map[string]int{"/assets/nope.js": http.StatusNotFound, "/index.html": http.StatusNotFound} {
		if got := get(t, mux, http.MethodGet, path).StatusCode; got != want {
			t.Fatalf("GET %s: %d, want %d", path, got, want)
		}
	}
	if got := get(t, mux, http.MethodPost, "/").StatusCode; got != http.StatusMethodNotAllowed {
		t.Fatalf("POST /: %d", got)
	}
}
