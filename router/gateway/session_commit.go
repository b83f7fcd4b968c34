package gateway

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// commitTurn records a served turn: w won its race. The winner becomes
// (or stays) the primary; its planned successor replaces the session's,
// and every standby stream no longer needed is stopped. continued: w's
// stream broke and another provider finished the answer, so w sealed
// nothing of this turn and its successor still holds the last one.
func (g *Gateway) commitTurn(ctx context.Context, t *sessionTurn, w choice, continued bool) *SessionInfo {
	winner := &member{peer: w.offer.Peer, machine: w.offer.Machine, region: w.offer.Region}
	g.operatorOf(ctx, winner)
	served := ServedByPrimary
	switch {
	case t.primary == nil || w.offer.Peer == t.primary.peer:
	case t.successor != nil && w.offer.Peer == t.successor.peer:
		served = ServedBySuccessor
		g.sessionMetrics.failovers.Inc()
	default:
		served = ServedByReplacement
	}
	t.mu.Lock()
	p, planned := t.plans[w.offer.Peer]
	opened := t.opened
	t.mu.Unlock()

	g.sessions.mu.Lock()
	e := t.e
	old := e.successor
	if t.continuity == ContinuityOff {
		e.successor, e.reason = nil, ReasonContinuityOff
	} else if planned {
		e.successor, e.reason = p.succ, p.reason
	}
	// else: the pinned primary kept the session's successor (or, if a
	// challenge dropped it meanwhile, its absence).
	e.primary, e.model, e.turn, e.lastUse, e.busy, e.level = winner, t.model, t.n, g.clock.Now(), false, t.level
	if served == ServedBySuccessor {
		e.failovers++
	}
	if e.successor != nil {
		switch {
		case !continued:
			e.sealed = t.n
		case e.successor != old:
			e.sealed = 0 // a new successor that got nothing yet: no challenge until it does
		}
		if e.successor != old {
			g.sessionMetrics.assigned.Inc()
		}
	}
	if continued {
		served = ServedByContinued // said last: the failover counts above still held
	}
	info := &SessionInfo{ID: e.id, Turn: e.turn, Primary: *winner.view(), Successor: e.successor.view(), ServedBy: served}
	if e.successor == nil {
		info.SuccessorReason = e.reason
	}
	keep := e.successor
	persisted := g.persistLocked([]*sessionEntry{e}, nil)
	g.sessions.mu.Unlock()
	persisted()

	if old != nil && old != keep {
		why := "replaced"
		if old.peer == winner.peer {
			why = "promoted" // it serves as primary now, no longer standing by
		}
		g.stopStream(old, why)
	}
	g.stopUnused(opened, keep, old)
	return info
}

// abortTurn ends a turn that was not served: streams it opened for
// successors never engaged are stopped, and a session the turn created is
// dropped (its ID never reached the buyer as a served session).
func (g *Gateway) abortTurn(t *sessionTurn) {
	t.mu.Lock()
	opened := t.opened
	t.mu.Unlock()
	g.sessions.mu.Lock()
	t.e.busy = false
	keep := t.e.successor
	persisted := func() {}
	if t.created {
		g.sessions.remove(t.id)
		keep = nil
		persisted = g.persistLocked(nil, []string{t.id})
	}
	g.sessions.mu.Unlock()
	persisted()
	g.sessionMetrics.active.Set(float64(g.sessions.len()))
	g.stopUnused(opened, keep, nil)
}

func (g *Gateway) stopUnused(opened []*member, keep, stopped *member) {
	for _, m := range opened {
		if m != keep && m != stopped {
			g.stopStream(m, "unused")
		}
	}
}

// stopStream stops m's standby stream in the background: the stop waits
// for its block, and nothing else waits for it.
func (g *Gateway) stopStream(m *member, why string) {
	if m == nil || m.stream == "" || g.streams == nil {
		return
	}
	id := m.stream
	go func() {
		ctx, cancel := g.clock.WithTimeout(context.Background(), streamTimeout)
		defer cancel()
		if err := g.streams.Stop(ctx, id); err != nil {
			g.log.Warn("session: stop a standby stream", "stream", id, "why", why, "err", err)
			return
		}
		g.sessionMetrics.streamsStopped.WithLabelValues(why).Inc()
	}()
}

// challengeRetry is how long a successor that does not yet hold the
// expected turn gets before it is asked again: the primary seals and
// sends the state after answering, so the transfer may trail the answer.
const challengeRetry = 2 * time.Second

// challenge asks successor m to prove it holds turn want of session e
// (the last its primary sealed to it) or a later one up to the turn being
// served when it answers, whose state may already have reached it. The gateway knows the
// turn, not the state hash (the primary computes it and the gateway never
// sees the state), so the turn is what is checked. A successor that
// cannot answer, or answers another turn after one retry, loses the
// session: its stream is stopped and the next turn assigns a new one.
func (g *Gateway) challenge(e *sessionEntry, m *member, want uint32) {
	if g.proves(e, m, want) {
		return
	}
	if g.dropSuccessor(e, m) {
		g.stopStream(m, "challenge_failed")
	}
}

// proves asks m, up to twice, to prove it holds a turn of e in
// want..e.turn+1, and counts the outcome.
func (g *Gateway) proves(e *sessionEntry, m *member, want uint32) bool {
	var got uint32
	var err error
	for try := 0; try < 2; try++ {
		if try > 0 {
			g.clock.Sleep(challengeRetry)
		}
		ctx, cancel := g.clock.WithTimeout(context.Background(), successorTimeout)
		got, _, err = g.successors.Challenge(ctx, m.peer, e.id)
		cancel()
		g.sessions.mu.Lock()
		latest := e.turn + 1 // the turn in flight, or the next
		g.sessions.mu.Unlock()
		if err == nil && got >= want && got <= latest {
			g.sessionMetrics.challenges.WithLabelValues("passed").Inc()
			return true
		}
		// The retry waits for a state in transfer; one unreachable and
		// lapsed has none coming, and every second of it is paid.
		if err != nil && g.lapsed(m) {
			break
		}
	}
	g.sessionMetrics.challenges.WithLabelValues("failed").Inc()
	g.log.Warn("session: successor failed its challenge", "session", e.id, "successor", m.peer, "want_turn", want, "turn", got, "err", err)
	return false
}

// dropSuccessor takes m from session e for good, if it is still e's
// successor.
func (g *Gateway) dropSuccessor(e *sessionEntry, m *member) bool {
	g.sessions.mu.Lock()
	dropped := e.successor == m
	persisted := func() {}
	if dropped {
		e.successor, e.reason = nil, ReasonChallengeFailed
		if e.failed == nil {
			e.failed = map[peer.ID]bool{}
		}
		e.failed[m.peer] = true
		if g.sessions.m[e.id] == e {
			persisted = g.persistLocked([]*sessionEntry{e}, nil)
		}
	}
	g.sessions.mu.Unlock()
	persisted()
	return dropped
}

// SweepSessions ends every session idle for longer than the idle timeout,
// stopping its standby stream; the node calls it periodically, and turns
// call it at most once a second.
func (g *Gateway) SweepSessions() int {
	gone := g.sessions.expired(g.clock.Now(), g.persistLocked)
	for _, e := range gone {
		g.sessions.mu.Lock()
		s := e.successor
		g.sessions.mu.Unlock()
		g.stopStream(s, "idle")
	}
	g.sessionMetrics.active.Set(float64(g.sessions.len()))
	return len(gone)
}

// EndSessions ends every session as the gateway stops: the table lives
// in memory, so a standby stream left open would pay a successor nobody
// will fail over to until its deposit ran out. The stops run in turn (one
// account signs them) until ctx ends; what is left then runs out its
// deposit, bounded by the standby horizon.
func (g *Gateway) EndSessions(ctx context.Context) int {
	g.sessions.mu.Lock()
	var streams, ids []string
	for id, e := range g.sessions.m {
		if e.successor != nil && e.successor.stream != "" {
			streams = append(streams, e.successor.stream)
		}
		g.sessions.remove(id)
		ids = append(ids, id)
	}
	persisted := g.persistLocked(nil, ids)
	g.sessions.mu.Unlock()
	persisted()
	g.sessionMetrics.active.Set(0)
	stopped := 0
	for _, id := range streams {
		if g.streams == nil || ctx.Err() != nil {
			break
		}
		if err := g.streams.Stop(ctx, id); err != nil {
			g.log.Warn("session: stop a standby stream at shutdown", "stream", id, "err", err)
			continue
		}
		g.sessionMetrics.streamsStopped.WithLabelValues("shutdown").Inc()
		stopped++
	}
	return stopped
}
