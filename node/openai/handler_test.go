package openai

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTypeErrorNamesTheField: a wrongly typed field is named by its JSON
// name, whether the endpoint's own or one both endpoints share; the body is
// refused before any backend is asked.
func TestTypeErrorNamesTheField(t *testing.T) {
	mux := http.NewServeMux()
	NewHandler(nil).Register(mux)
	for _, c := range []struct{ path, body, param string }{
		{"/v1/chat/completions", `{"model":"m","max_tokens":"x"}`, "max_tokens"},
		{"/v1/chat/completions", `{"model":"m","top_logprobs":"x"}`, "top_logprobs"},
		{"/v1/completions", `{"model":"m","temperature":"x"}`, "temperature"},
		{"/v1/completions", `{"model":"m","echo":"x"}`, "echo"},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(c.body)))
		var got struct{ Error Error }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s %s: %v", c.path, c.body, err)
		}
		if rec.Code != http.StatusBadRequest || got.Error.Param != c.param {
			t.Errorf("%s %s: %d param %q, want 400 param %q", c.path, c.body, rec.Code, got.Error.Param, c.param)
		}
	}
}
