package gateway

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

// TestEndSession: the buyer ends its session before the idle timeout;
// the successor's standby stream is stopped before the answer, the
// session is gone, and ending it again, another buyer's session or a bad
// ID are refused with the right status.
func TestEndSession(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		sm := newSessionMarket(t, st, 2, true, answer(ms, "ok"))
		sm.standby(0, "DE", 1, 10)
		sm.standby(1, "DE", 1, 20)
		sm.beatOnly(0, 1)
		info := sm.mustTurn(t, &SessionRequest{Continuity: ContinuityOn})
		if info.Successor == nil {
			t.Fatalf("no successor: %+v", info)
		}
		status := func(err error) int {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a gateway error", err)
			}
			return e.Status
		}
		if _, err := sm.gw.EndSession(context.Background(), info.ID, "mallory"); status(err) != http.StatusNotFound {
			t.Fatalf("another buyer's end: %v", err)
		}
		if _, err := sm.gw.EndSession(context.Background(), "bad id!", "alice"); status(err) != http.StatusBadRequest {
			t.Fatalf("a bad ID: %v", err)
		}
		if _, ok := sm.gw.Session(info.ID); !ok {
			t.Fatal("a refused end ended the session")
		}
		busy := func(b bool) {
			sm.gw.sessions.mu.Lock()
			sm.gw.sessions.m[info.ID].busy = b
			sm.gw.sessions.mu.Unlock()
		}
		busy(true) // a turn in flight
		if _, err := sm.gw.EndSession(context.Background(), info.ID, "alice"); status(err) != http.StatusConflict {
			t.Fatalf("ending a session in a turn: %v", err)
		}
		busy(false)
		out, err := sm.gw.EndSession(context.Background(), info.ID, "alice")
		if err != nil {
			t.Fatal(err)
		}
		opened, stopped := sm.chain.streams()
		if len(opened) != 1 || out.Stream != opened[0].id || !out.Stopped || !stopped[opened[0].id] || out.Turns != 1 {
			t.Fatalf("ended %+v; streams %+v stopped %v", out, opened, stopped)
		}
		if got := count(sm.gw.sessionMetrics.streamsStopped.WithLabelValues("ended")); got != 1 {
			t.Fatalf("streams stopped (ended) %v", got)
		}
		if _, ok := sm.gw.Session(info.ID); ok {
			t.Fatal("an ended session is still held")
		}
		if _, err := sm.gw.EndSession(context.Background(), info.ID, "alice"); status(err) != http.StatusNotFound {
			t.Fatalf("ending it twice: %v", err)
		}
		// Its idle sweep finds nothing left to stop.
		if n := sm.gw.SweepSessions(); n != 0 {
			t.Fatalf("swept %d after the end", n)
		}
	})
}
