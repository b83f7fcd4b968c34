package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"time"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeUnavailable is a server-defined code: the method exists but what
	// it needs (a subsystem, a peer) is not available right now.
	CodeUnavailable = -32000
	// CodeUnauthorized is a server-defined code: the method reads what
	// belongs to one buyer and the request carries neither that buyer's
	// bearer token nor the operator's. A single call answering it is
	// HTTP 401.
	CodeUnauthorized = -32001
)

// MaxBody caps a request body; a larger one is a parse error.
const MaxBody = 1 << 20

// Error is a JSON-RPC error object. Handlers return it to choose the code;
// any other error becomes an internal error carrying its message.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// InvalidParams returns a CodeInvalidParams error.
func InvalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// Unavailable returns a CodeUnavailable error.
func Unavailable(format string, args ...any) *Error {
	return &Error{Code: CodeUnavailable, Message: fmt.Sprintf(format, args...)}
}

// Unauthorized returns a CodeUnauthorized error.
func Unauthorized(format string, args ...any) *Error {
	return &Error{Code: CodeUnauthorized, Message: fmt.Sprintf(format, args...), Data: map[string]int{"status": http.StatusUnauthorized}}
}

// Handler answers one method. params is the raw "params" member (nil when
// absent).
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Server dispatches JSON-RPC 2.0 requests to registered handlers.
type Server struct {
	methods      map[string]Handler
	log          *slog.Logger
	maxBatch     int
	batchTimeout time.Duration
}

// NewServer returns a server with no methods.
func NewServer(log *slog.Logger, opts ...Option) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{methods: make(map[string]Handler), log: log, maxBatch: DefaultMaxBatch, batchTimeout: DefaultBatchTimeout}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Register adds a method; registering a name twice is a programming error.
func (s *Server) Register(name string, h Handler) {
	if _, dup := s.methods[name]; dup {
		panic("rpc: method registered twice: " + name)
	}
	s.methods[name] = h
}

// Handler returns a registered method's handler.
func (s *Server) Handler(name string) (Handler, bool) {
	h, ok := s.methods[name]
	return h, ok
}

// Methods lists the registered method names, sorted.
func (s *Server) Methods() []string {
	return slices.Sorted(maps.Keys(s.methods))
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// ServeHTTP handles POST requests carrying a call or a batch.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "JSON-RPC 2.0 expects POST", http.StatusMethodNotAllowed)
		return
	}
	body, rerr := readBody(w, r)
	if rerr != nil {
		writeJSON(w, &response{JSONRPC: "2.0", ID: idOrNull(nil), Error: rerr})
		return
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	ctx := WithHeader(r.Context(), r.Header)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		s.serveBatch(w, ctx, trimmed)
		return
	}
	resp, notify := s.call(ctx, trimmed)
	if notify {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if resp.Error != nil && resp.Error.Code == CodeUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tenzrod"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	writeJSON(w, resp)
}

// parse decodes one request object; a malformed one gets its error
// response (never a notification).
func parse(raw []byte) (request, *response) {
	var req request
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return req, errorResponse(nil, CodeParseError, "invalid JSON: "+err.Error())
		}
		return req, errorResponse(nil, CodeInvalidRequest, "not a JSON-RPC 2.0 request object: "+err.Error())
	}
	if req.JSONRPC != "2.0" {
		return req, errorResponse(req.ID, CodeInvalidRequest, `"jsonrpc" must be "2.0"`)
	}
	if req.Method == "" {
		return req, errorResponse(req.ID, CodeInvalidRequest, `"method" is missing`)
	}
	return req, nil
}

// call runs one request; notify reports a notification (no response).
func (s *Server) call(ctx context.Context, raw []byte) (resp *response, notify bool) {
	req, bad := parse(raw)
	if bad != nil {
		return bad, false
	}
	notify = len(req.ID) == 0
	h, ok := s.methods[req.Method]
	if !ok {
		return errorResponse(req.ID, CodeMethodNotFound, fmt.Sprintf("method %q not found", req.Method)), notify
	}
	result, err := safeCall(ctx, h, req.Params)
	if err != nil {
		var re *Error
		if !errors.As(err, &re) {
			s.log.Warn("rpc method failed", "method", req.Method, "err", err)
			re = &Error{Code: CodeInternalError, Message: err.Error()}
		}
		return &response{JSONRPC: "2.0", ID: idOrNull(req.ID), Error: re}, notify
	}
	if result == nil {
		result = struct{}{}
	}
	return &response{JSONRPC: "2.0", ID: idOrNull(req.ID), Result: result}, notify
}

// safeCall turns a handler panic (a bug) into an internal error rather than
// tearing down the HTTP connection without an answer.
func safeCall(ctx context.Context, h Handler, params json.RawMessage) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return h(ctx, params)
}

// readBody reads the body under MaxBody; a declared length over it is
// refused before a byte is read.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *Error) {
	tooBig := &Error{Code: CodeParseError, Message: fmt.Sprintf("body exceeds %d bytes", MaxBody)}
	if r.ContentLength > MaxBody {
		return nil, tooBig
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err == nil {
		return body, nil
	}
	switch BodyFault(err) {
	case FaultTooLarge:
		return nil, tooBig
	case FaultBusy:
		return nil, &Error{Code: CodeUnavailable, Message: "reading body: " + err.Error()}
	default:
		return nil, &Error{Code: CodeParseError, Message: "reading body: " + err.Error()}
	}
}

func idOrNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

func errorResponse(id json.RawMessage, code int, msg string) *response {
	return &response{JSONRPC: "2.0", ID: idOrNull(id), Error: &Error{Code: code, Message: msg}}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Params decodes params into a T, refusing unknown fields; absent params
// decode as T's zero value.
func Params[T any](raw json.RawMessage) (T, error) {
	var v T
	if len(raw) == 0 || string(raw) == "null" {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, InvalidParams("params: %v", err)
	}
	return v, nil
}
