package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Batch bounds: a batch is one HTTP request, so its calls together get
// the time one long call may take (a 30 s gossip tail or evidence wait),
// not that time per call.
const (
	DefaultMaxBatch     = 100
	DefaultBatchTimeout = 30 * time.Second
)

// Option configures a Server.
type Option func(*Server)

// serveBatch runs a batch's calls in order under one deadline. Calls still
// waiting when it passes are answered with CodeUnavailable without being
// run; the call running then sees its context end.
func (s *Server) serveBatch(w http.ResponseWriter, ctx context.Context, body []byte) {
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		writeJSON(w, errorResponse(nil, CodeParseError, "invalid JSON: "+err.Error()))
		return
	}
	if len(items) == 0 || len(items) > s.maxBatch {
		writeJSON(w, errorResponse(nil, CodeInvalidRequest, fmt.Sprintf("batch must hold 1..%d calls, not %d", s.maxBatch, len(items))))
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.batchTimeout)
	defer cancel()
	var out []*response
	for _, it := range items {
		var resp *response
		var notify bool
		if ctx.Err() != nil {
			resp, notify = s.skipped(it)
		} else {
			resp, notify = s.call(ctx, it)
		}
		if !notify {
			out = append(out, resp)
		}
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, out)
}

// skipped answers a call the batch deadline left no time for, as call
// would have but without running it: a malformed call gets its error, a
// notification nothing, any other call CodeUnavailable under its ID.
func (s *Server) skipped(raw json.RawMessage) (*response, bool) {
	req, bad := parse(raw)
	if bad != nil {
		return bad, false
	}
	if len(req.ID) == 0 {
		return nil, true
	}
	return errorResponse(req.ID, CodeUnavailable, fmt.Sprintf("not run: the batch's time bound of %s passed", s.batchTimeout)), false
}
