package openai

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxBody caps a request body (the default; WithMaxBody lowers it).
const MaxBody = 4 << 20

// Handler serves the OpenAI routes over a Backend.
type Handler struct {
	backend Backend
	now     func() time.Time
	auth    func(*http.Request) error
	maxBody int64
}

// NewHandler returns the routes' handler.
func NewHandler(b Backend, opts ...HandlerOption) *Handler {
	h := &Handler{backend: b, now: time.Now, maxBody: MaxBody}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Register adds the routes to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/chat/completions", h.chat)
	mux.HandleFunc("POST /v1/completions", h.completions)
	mux.HandleFunc("GET /v1/models", h.models)
	mux.HandleFunc("DELETE /v1/sessions/{id}", h.endSession)
}

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	ms := h.backend.Models(r.Context())
	if ms == nil {
		ms = []Model{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": ms})
}

// decodeBody authenticates the request, then reads and decodes its body.
func (h *Handler) decodeBody(w http.ResponseWriter, r *http.Request, v any) *Error {
	if e := h.authenticate(r); e != nil {
		return e
	}
	body, e := h.readBody(w, r)
	if e != nil {
		return e
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The fields both endpoints share are embedded: the client
			// knows them by their JSON name alone.
			field := strings.TrimPrefix(te.Field, "GenerationParams.")
			return BadRequest(field, "%s: expected %s", field, te.Type)
		}
		return BadRequest("", "invalid JSON body: %v", err)
	}
	return nil
}

func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	h.generate(w, r, &ChatRequest{}, "chatcmpl-")
}

func (h *Handler) completions(w http.ResponseWriter, r *http.Request) {
	h.generate(w, r, &CompletionRequest{}, "cmpl-")
}

// generate decodes r's body into gr and serves it; idPrefix starts the
// answer's id as OpenAI's does for that endpoint.
func (h *Handler) generate(w http.ResponseWriter, r *http.Request, gr generationRequest, idPrefix string) {
	if e := h.decodeBody(w, r, gr); e != nil {
		writeError(w, e)
		return
	}
	req, e := gr.toRequest()
	if e != nil {
		writeError(w, e)
		return
	}
	req.Header = r.Header
	gr.common().routing(req)
	h.serve(w, r.Context(), req, idPrefix, gr.common().includeUsage())
}

func (h *Handler) serve(w http.ResponseWriter, ctx context.Context, req *Request, idPrefix string, includeUsage bool) {
	id := idPrefix + randomID()
	created := h.now().Unix()
	if req.Stream {
		h.stream(w, ctx, req, id, created, includeUsage)
		return
	}
	res, err := h.backend.Complete(ctx, req, func(Delta) error { return nil })
	if err != nil {
		writeError(w, asError(err))
		return
	}
	writeJSON(w, http.StatusOK, finalBody(req, res, id, created))
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// randomSeed fixes a request's seed when the client gave none, so that a
// continuation elsewhere and the receipt use the same randomness.
func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Status: http.StatusGatewayTimeout, Type: "server_error", Code: "timeout", Message: err.Error()}
	}
	return &Error{Status: http.StatusInternalServerError, Type: "server_error", Message: err.Error()}
}

func writeError(w http.ResponseWriter, e *Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	body := map[string]any{"error": e}
	if e.Tenzro != nil {
		body["tenzro"] = e.Tenzro
	}
	writeJSON(w, e.Status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
