package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// enderBackend holds one session of the token "good".
type enderBackend struct{ echoBackend }

func (enderBackend) EndSession(_ context.Context, h http.Header, id string) (any, error) {
	if id != "s1" {
		return nil, &Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_session", Param: "id", Message: "no such session"}
	}
	return map[string]string{"id": id}, nil
}

// TestEndSessionRoute: DELETE /v1/sessions/{id} authenticates first,
// answers the backend's result or its error, and is a clear 404 on a
// node that holds no sessions.
func TestEndSessionRoute(t *testing.T) {
	auth := WithAuth(func(r *http.Request) error {
		if r.Header.Get("Authorization") != "Bearer good" {
			return errors.New("bad token")
		}
		return nil
	})
	do := func(b Backend, id, token string) (int, map[string]any) {
		mux := http.NewServeMux()
		NewHandler(b, auth).Register(mux)
		req := httptest.NewRequest(http.MethodDelete, "/v1/sessions/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		var out map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s: body %q: %v", id, w.Body, err)
		}
		return w.Code, out
	}
	code, out := do(enderBackend{echoBackend{t}}, "s1", "good")
	if code != http.StatusOK || out["id"] != "s1" {
		t.Fatalf("end s1: %d %v", code, out)
	}
	if code, out := do(enderBackend{echoBackend{t}}, "s2", "good"); code != http.StatusNotFound || out["error"].(map[string]any)["code"] != "unknown_session" {
		t.Fatalf("end an unknown session: %d %v", code, out)
	}
	if code, _ := do(enderBackend{echoBackend{t}}, "s1", "bad"); code != http.StatusUnauthorized {
		t.Fatalf("a bad token: %d", code)
	}
	if code, out := do(echoBackend{t}, "s1", "good"); code != http.StatusNotFound || out["error"].(map[string]any)["code"] != "sessions_unsupported" {
		t.Fatalf("a node without sessions: %d %v", code, out)
	}
}
