package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/router"
)

// successorCheck is one successor to challenge between turns.
type successorCheck struct {
	e    *sessionEntry
	m    *member
	want uint32
}

// CheckSuccessors challenges, between turns, the successors that must
// prove what they hold: every one when all (the schedule, each
// challenge_interval), else only those whose heartbeats lapsed or whose
// connection closed. One that fails is dropped, its standby stream
// stopped at once, and a replacement engaged for the session's primary,
// so nobody is paid to stand by dead or cold. It returns the challenges
// started; wg, when set, counts them.
func (g *Gateway) CheckSuccessors(all bool, wg *sync.WaitGroup) int {
	if g.successors == nil {
		return 0
	}
	now := g.clock.Now()
	g.sessions.mu.Lock()
	var cands []successorCheck
	for _, e := range g.sessions.m {
		// A lapse re-checks a successor that passed only after a while: one
		// degraded but answering is not asked every second.
		if e.successor != nil && !e.busy && !e.checking && (all || now.Sub(e.checkedAt) >= lapseRecheck) {
			cands = append(cands, successorCheck{e, e.successor, e.sealed})
		}
	}
	g.sessions.mu.Unlock()
	var due []successorCheck
	for _, c := range cands {
		if all || g.lapsed(c.m) {
			due = append(due, c)
		}
	}
	g.sessions.mu.Lock()
	n := 0
	for _, c := range due {
		if c.e.successor != c.m || c.e.busy || c.e.checking || g.sessions.m[c.e.id] != c.e {
			continue
		}
		c.e.checking = true
		n++
		if wg != nil {
			wg.Add(1)
		}
		go func() {
			if wg != nil {
				defer wg.Done()
			}
			g.checkSuccessor(c)
		}()
	}
	g.sessions.mu.Unlock()
	return n
}

// lapseRecheck spaces the lapse-triggered challenges of one successor.
const lapseRecheck = 10 * time.Second

// lapsed: the table knows the provider and it is not up (its heartbeats
// lapsed), or this node's connection to it just closed. One the table
// has not heard of yet (a gateway just restarted) is left to the
// schedule.
func (g *Gateway) lapsed(m *member) bool {
	if g.table.Suspected(m.peer) {
		return true
	}
	v, ok := g.table.Get(m.peer)
	return ok && v.Status != router.StatusUp
}

func (g *Gateway) checkSuccessor(c successorCheck) {
	ok := g.proves(c.e, c.m, c.want)
	g.sessions.mu.Lock()
	c.e.checking, c.e.checkedAt = false, g.clock.Now()
	g.sessions.mu.Unlock()
	if ok || !g.dropSuccessor(c.e, c.m) {
		return
	}
	g.stopStream(c.m, "challenge_failed")
	g.replaceSuccessor(c.e)
}

// replaceSuccessor engages a new successor for session e's primary
// between turns. The session is held busy meanwhile, so no turn races
// it; the primary seals to the new successor from its next turn, which
// names it.
func (g *Gateway) replaceSuccessor(e *sessionEntry) {
	g.sessions.mu.Lock()
	if e.busy || e.successor != nil || e.primary == nil || e.continuity == ContinuityOff || g.sessions.m[e.id] != e {
		g.sessions.mu.Unlock()
		return
	}
	e.busy = true
	t := &sessionTurn{e: e, id: e.id, payer: e.payer, n: e.turn, continuity: e.continuity, jurisdiction: e.jurisdiction,
		level: e.level, model: e.model, primary: e.primary, plans: nil}
	for p := range e.failed {
		t.failed = append(t.failed, p)
	}
	primary := *e.primary
	g.sessions.mu.Unlock()

	ctx, cancel := g.clock.WithTimeout(context.Background(), streamTimeout+successorTimeout)
	defer cancel()
	c := choice{offer: router.Offer{Peer: primary.peer, Machine: primary.machine, Region: primary.region}}
	t.mu.Lock()
	p := g.planSuccessor(ctx, t, c)
	opened := t.opened
	t.mu.Unlock()

	g.sessions.mu.Lock()
	e.busy = false
	if g.sessions.m[e.id] != e { // ended meanwhile
		p.succ = nil
	}
	if p.succ != nil {
		e.successor, e.reason, e.sealed = p.succ, "", 0
	} else if p.reason != "" {
		e.reason = p.reason
	}
	var persisted func()
	if g.sessions.m[e.id] == e {
		persisted = g.persistLocked([]*sessionEntry{e}, nil)
	} else {
		persisted = func() {}
	}
	g.sessions.mu.Unlock()
	persisted()
	if p.succ != nil {
		g.sessionMetrics.assigned.Inc()
		g.log.Info("session: successor replaced between turns", "session", e.id, "successor", p.succ.peer)
	} else {
		g.sessionMetrics.noSuccessor.WithLabelValues(p.reason).Inc()
	}
	g.stopUnused(opened, p.succ, nil)
}
