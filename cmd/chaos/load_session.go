package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenzrod/tenzrod/inference"
)

// Session load: conversations with continuity run beside the plain load,
// so provider kills land between turns and the successor's warm state,
// its standby stream and the stream's money meet every fault.
const (
	sessionEvery  = 12 * time.Second // a new session this often
	sessionTurns  = 4
	sessionGap    = 1500 * time.Millisecond // between a session's turns
	sessionTokens = 12
)

// runSessions starts a session every sessionEvery on the devnet's
// gateways in turn (the join gateway buys from its own escrow and stands
// nobody by) until ctx ends, then waits for the sessions under way.
func (l *loader) runSessions(ctx context.Context) {
	tick := time.NewTicker(sessionEvery)
	defer tick.Stop()
	var wg sync.WaitGroup
	for i := int64(0); ; i++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
		}
		target := l.cl.gateways[int(i)%len(l.cl.gateways)]
		wg.Go(func() { l.session(ctx, target, i) })
	}
}

// session runs one conversation of up to sessionTurns turns at p; a turn
// that fails ends it (its later turns would carry a history the buyer
// never got).
func (l *loader) session(ctx context.Context, p *proc, n int64) {
	var history []inference.Message
	var id string
	for turn := 1; turn <= sessionTurns; turn++ {
		req := chatRequest{Prompt: fmt.Sprintf("chaos seed %d session %d turn %d", l.seed, n, turn),
			Seed: l.seed*1_000_033 + n*16 + int64(turn), MaxTokens: sessionTokens, NoHedge: true,
			History: history, Session: id, Turn: turn}
		k := call(context.Background(), l.cl, p, "session", req)
		l.h.addCall(k)
		if !k.ok() {
			return
		}
		if t := k.Answer.Tenzro; t != nil && t.Session != nil && id == "" {
			id = t.Session.ID
		}
		if id == "" {
			return
		}
		history = append(req.messages(), inference.Message{Role: "assistant", Content: k.Answer.Text})
		select {
		case <-ctx.Done():
			return
		case <-time.After(sessionGap):
		}
	}
	l.endSession(p, id)
}

// sessionEnds counts the DELETEs that end finished sessions: a gateway
// restarted since has forgotten the session (404), which is no fault.
type sessionEnds struct {
	ended, stopped, unknown, failed atomic.Int64
}

// endSession ends a finished session at p, so its standby stream stops
// now rather than at the idle timeout.
func (l *loader) endSession(p *proc, id string) {
	req, err := http.NewRequest(http.MethodDelete, p.api+"/v1/sessions/"+id, nil)
	if err != nil {
		l.ends.failed.Add(1)
		return
	}
	req.Header.Set("Authorization", "Bearer "+l.cl.token(p))
	resp, err := callClient.Do(req)
	if err != nil {
		l.ends.failed.Add(1)
		return
	}
	defer resp.Body.Close()
	var out struct {
		Stopped bool `json:"stream_stopped"`
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		l.ends.unknown.Add(1)
	case resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil:
		l.ends.failed.Add(1)
	default:
		l.ends.ended.Add(1)
		if out.Stopped {
			l.ends.stopped.Add(1)
		}
	}
}

// checkSessions reports the session turns and how they were served; a
// complete turn whose response says nothing of its session is a
// violation (the buyer could not know whether a successor stands by).
func (c *checker) checkSessions(calls []*callRecord, ends *sessionEnds) string {
	var turns, ok, sessions int
	by := map[string]int{}
	for _, k := range calls {
		if k.Kind != "session" {
			continue
		}
		turns++
		if k.Req.Turn == 1 {
			sessions++
		}
		if !k.ok() {
			continue
		}
		ok++
		t := k.Answer.Tenzro
		if t == nil || t.Session == nil || t.Session.ID == "" {
			c.violate("call %d (session turn %d via %s): answered without its session", k.ID, k.Req.Turn, k.Router)
			continue
		}
		by[t.Session.ServedBy]++
		if t.Session.Successor == nil {
			by["no successor ("+t.Session.SuccessorReason+")"]++
		}
	}
	return fmt.Sprintf("sessions: %d started, %d of %d turns complete; served by %v; ended %d (%d standby streams stopped), %d forgotten by a restarted gateway, %d ends failed",
		sessions, ok, turns, by, ends.ended.Load(), ends.stopped.Load(), ends.unknown.Load(), ends.failed.Load())
}
