package openai

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tenzrod/tenzrod/node/rpc"
)

// HandlerOption configures a Handler.
type HandlerOption func(*Handler)

// WithAuth makes the completion routes call auth before they read a byte of
// the body, so an unauthenticated client costs the node its headers only.
// A *Error return is written as it is; any other error is a 401.
func WithAuth(auth func(r *http.Request) error) HandlerOption {
	return func(h *Handler) { h.auth = auth }
}

// BearerToken returns the token of an `Authorization: Bearer <token>`
// header. The scheme is case-insensitive and may be followed by several
// spaces (RFC 9110 §11.1); a missing scheme, another scheme or an empty
// token reports false.
func BearerToken(h http.Header) (string, bool) {
	scheme, rest, ok := strings.Cut(strings.TrimLeft(h.Get("Authorization"), " \t"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok := strings.Trim(rest, " \t")
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}

// authenticate runs the auth hook. It first rewrites a bearer header to the
// one spelling `Bearer <token>`, so that a backend comparing that prefix
// accepts `bearer` or `BEARER` as well.
func (h *Handler) authenticate(r *http.Request) *Error {
	if tok, ok := BearerToken(r.Header); ok {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	if h.auth == nil {
		return nil
	}
	err := h.auth(r)
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: http.StatusUnauthorized, Type: "authentication_error", Code: "invalid_api_key", Message: err.Error()}
}

// tooLarge is the 413 for a body over the cap.
func tooLarge(limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
		Message: fmt.Sprintf("request body exceeds %d bytes", limit)}
}

// readBody reads the whole body under the cap. A declared length over the
// cap is refused before reading; a known length is read into one buffer of
// exactly that size, so memory per request is the body and not a doubling
// series of copies.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *Error) {
	if r.ContentLength > h.maxBody {
		return nil, tooLarge(h.maxBody)
	}
	body := http.MaxBytesReader(w, r.Body, h.maxBody)
	var (
		b   []byte
		err error
	)
	if r.ContentLength > 0 {
		b = make([]byte, r.ContentLength)
		_, err = io.ReadFull(body, b)
	} else {
		b, err = io.ReadAll(body)
	}
	if err == nil {
		return b, nil
	}
	switch rpc.BodyFault(err) {
	case rpc.FaultTooLarge:
		return nil, tooLarge(h.maxBody)
	case rpc.FaultBusy:
		e := Unavailable("reading the request body: %v", err)
		e.RetryAfter = 1
		return nil, e
	default:
		return nil, BadRequest("", "reading the request body: %v", err)
	}
}
