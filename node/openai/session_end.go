package openai

import (
	"context"
	"errors"
	"net/http"
)

// SessionEnder is a Backend that holds sessions (a gateway's): it ends
// the calling buyer's session id, and its result is the response body.
type SessionEnder interface {
	EndSession(ctx context.Context, header http.Header, id string) (any, error)
}

// endSession is DELETE /v1/sessions/{id}: the buyer ends a session before
// its idle timeout, so its standby stops being paid now.
func (h *Handler) endSession(w http.ResponseWriter, r *http.Request) {
	if e := h.authenticate(r); e != nil {
		writeError(w, e)
		return
	}
	se, ok := h.backend.(SessionEnder)
	if !ok {
		writeError(w, &Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "sessions_unsupported",
			Message: "this node holds no sessions: end a session at the gateway that routes it"})
		return
	}
	out, err := se.EndSession(r.Context(), r.Header, r.PathValue("id"))
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Status: http.StatusInternalServerError, Type: "server_error", Message: err.Error()}
		}
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
