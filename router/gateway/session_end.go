package gateway

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// EndedSession is what ending a session did.
type EndedSession struct {
	ID    string `json:"id"`
	Turns uint32 `json:"turns"`
	// Stream is the successor's standby stream, if one was paid; Stopped
	// says whether its stop committed (the remainder refunded to the
	// buyer's escrow), StopError why not. An unstopped stream runs out
	// its deposit, bounded by the standby horizon.
	Stream    string `json:"stream_id,omitempty"`
	Stopped   bool   `json:"stream_stopped"`
	StopError string `json:"stream_error,omitempty"`
}

// EndSession ends the buyer's session id at once, instead of at its idle
// timeout: it leaves the table and its successor's standby stream is
// stopped before the answer, so the buyer stops paying for standby now.
// A session unknown here or another buyer's is a 404 (its existence is
// not told); one with a turn in flight is a 409.
func (g *Gateway) EndSession(ctx context.Context, id, payer string) (EndedSession, error) {
	if err := CheckSessionID(id); err != nil {
		return EndedSession{}, &Error{Status: http.StatusBadRequest, Code: "invalid_session", Param: "id", Message: err.Error()}
	}
	g.sessions.mu.Lock()
	e, ok := g.sessions.m[id]
	if !ok || e.payer != payer {
		g.sessions.mu.Unlock()
		return EndedSession{}, &Error{Status: http.StatusNotFound, Code: "unknown_session", Param: "id",
			Message: fmt.Sprintf("no session %s of this buyer at this gateway (ended, idled out, or never begun here)", id)}
	}
	if e.busy {
		g.sessions.mu.Unlock()
		return EndedSession{}, &Error{Status: http.StatusConflict, Code: "session_busy", Param: "id", RetryAfter: time.Second,
			Message: fmt.Sprintf("session %s has a turn in flight; end it once the turn is answered", id)}
	}
	g.sessions.remove(id)
	out := EndedSession{ID: id, Turns: e.turn}
	succ := e.successor
	persisted := g.persistLocked(nil, []string{id})
	g.sessions.mu.Unlock()
	persisted()
	g.sessionMetrics.active.Set(float64(g.sessions.len()))
	if succ == nil || succ.stream == "" || g.streams == nil {
		return out, nil
	}
	out.Stream = succ.stream
	sctx, cancel := g.clock.WithTimeout(ctx, streamTimeout)
	defer cancel()
	if err := g.streams.Stop(sctx, succ.stream); err != nil {
		g.log.Warn("session: stop a standby stream of an ended session", "session", id, "stream", succ.stream, "err", err)
		out.StopError = err.Error()
		return out, nil
	}
	g.sessionMetrics.streamsStopped.WithLabelValues("ended").Inc()
	out.Stopped = true
	return out, nil
}
