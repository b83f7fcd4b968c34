package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/hedge"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// errUnfunded marks a standby stream that could not be opened.
var errUnfunded = errors.New("gateway: session: standby stream not funded")

// plan is the successor a turn's primary candidate gets.
type plan struct {
	succ   *member
	reason string
}

// sessionTurn is one turn of a session in flight: a snapshot of the
// session as the turn began and the successors planned for each primary
// it tried.
type sessionTurn struct {
	e            *sessionEntry
	created      bool // the turn made the session
	id, payer    string
	n            uint32 // this turn's number, 1-based
	continuity   Continuity
	jurisdiction string
	level        terms.Verification
	model        []byte
	primary      *member   // the pinned primary, nil on a first turn
	successor    *member   // the successor as the turn began
	failed       []peer.ID // successors that failed a challenge

	mu     sync.Mutex
	plans  map[peer.ID]*plan
	opened []*member // successors whose streams this turn opened
}

func (t *sessionTurn) modelID() (id [32]byte) {
	copy(id[:], t.model)
	return id
}

// beginTurn finds or creates the request's session and snapshots it.
func (g *Gateway) beginTurn(req *Request) (*sessionTurn, error) {
	now := g.clock.Now()
	if g.sessions.sweepDue(now) {
		g.SweepSessions()
	}
	e, created, err := g.sessions.begin(req.Session, req.Payer, now)
	if err != nil {
		return nil, err
	}
	if created {
		g.sessionMetrics.active.Set(float64(g.sessions.len()))
	}
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	t := &sessionTurn{e: e, created: created, id: e.id, payer: e.payer, n: e.turn + 1, continuity: e.continuity,
		jurisdiction: e.jurisdiction, level: req.Verification, model: e.model, primary: e.primary, successor: e.successor,
		plans: map[peer.ID]*plan{}}
	for p := range e.failed {
		t.failed = append(t.failed, p)
	}
	if e.successor != nil && e.sealed > 0 && g.successors != nil {
		go g.challenge(e, e.successor, e.sealed)
	}
	return t, nil
}

// arrange checks the turn's model against the session's and pins the
// ranking: the primary first while it is up, then the successor (the
// failover target), then everyone else. Hedging is off for a session: a
// hedge would serve the turn cold elsewhere.
func (g *Gateway) arrange(t *sessionTurn, cands []strategy.Candidate, choices map[peer.ID]choice) ([]strategy.Candidate, error) {
	id := choices[cands[0].Peer].offer.Model.ModelID
	if t.model == nil {
		t.model = append([]byte(nil), id...)
	} else if string(t.model) != string(id) {
		return nil, &Error{Status: http.StatusConflict, Code: "session_model", Param: "model",
			Message: fmt.Sprintf("session %s serves model %x; a turn cannot change it", t.id, t.model)}
	}
	var front, rest []strategy.Candidate
	for _, p := range []*member{t.primary, t.successor} {
		for _, c := range cands {
			if p != nil && c.Peer == p.peer {
				front = append(front, c)
			}
		}
	}
	for _, c := range cands {
		if (t.primary == nil || c.Peer != t.primary.peer) && (t.successor == nil || c.Peer != t.successor.peer) {
			rest = append(rest, c)
		}
	}
	return append(front, rest...), nil
}

// turnFor is the Session of one attempt of the turn at c: its number, the
// successor c is to seal its state to, and whether c serves as the
// failed-over successor.
func (g *Gateway) turnFor(ctx context.Context, t *sessionTurn, c choice) (*infer.SessionTurn, error) {
	st := &infer.SessionTurn{ID: t.id, Turn: t.n}
	st.Failover = t.primary != nil && t.successor != nil && c.offer.Peer == t.successor.peer
	if t.continuity == ContinuityOff {
		return st, nil
	}
	succ, reason := g.successorFor(ctx, t, c)
	if succ == nil {
		if t.continuity == ContinuityRequired {
			return nil, hedge.Permanent(&Error{Status: http.StatusConflict, Code: "no_successor",
				Message: fmt.Sprintf("continuity is required and no successor can stand by for session %s (%s)", t.id, reason)})
		}
		return st, nil
	}
	st.SuccessorPeer, st.SuccessorMachine, st.SuccessorKey = []byte(succ.peer), append([]byte(nil), succ.machine[:]...), succ.key
	return st, nil
}

// successorFor is the successor of primary candidate c: the session's
// current one when c is its pinned primary and the successor is up, else
// one planned (and funded and assigned) for c, once per turn.
func (g *Gateway) successorFor(ctx context.Context, t *sessionTurn, c choice) (*member, string) {
	if t.primary != nil && c.offer.Peer == t.primary.peer {
		g.sessions.mu.Lock()
		cur := t.e.successor
		g.sessions.mu.Unlock()
		// Not dropped by a failed challenge meanwhile, and not gone down:
		// a successor that is down is replaced now, not at the failover.
		if cur != nil && cur == t.successor && g.table.Status(cur.peer) == router.StatusUp {
			return cur, ""
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.plans[c.offer.Peer]; ok {
		return p.succ, p.reason
	}
	p := g.planSuccessor(ctx, t, c)
	t.plans[c.offer.Peer] = p
	if p.succ == nil {
		g.sessionMetrics.noSuccessor.WithLabelValues(p.reason).Inc()
	}
	return p.succ, p.reason
}

// planSuccessor picks, funds and assigns a successor for primary c. t.mu
// is held.
func (g *Gateway) planSuccessor(ctx context.Context, t *sessionTurn, c choice) *plan {
	if g.successors == nil {
		return &plan{reason: ReasonUnsupported}
	}
	primary := &member{peer: c.offer.Peer, machine: c.offer.Machine, region: c.offer.Region}
	g.operatorOf(ctx, primary)
	// The session's former primary is skipped: it is down or just failed
	// this turn, since c is another provider.
	exclude := map[peer.ID]bool{}
	for _, p := range t.failed {
		exclude[p] = true
	}
	if t.primary != nil && t.primary.peer != c.offer.Peer {
		exclude[t.primary.peer] = true
	}
	ms, _, reason := g.standbys(ctx, t, primary, exclude)
	if len(ms) == 0 {
		return &plan{reason: reason}
	}
	reason = ReasonAssignFailed
	for _, m := range ms[:min(len(ms), maxAssignTries)] {
		m = t.funded(m)
		err := g.engage(ctx, t, primary, m)
		if err == nil {
			return &plan{succ: m}
		}
		g.log.Warn("session: successor not engaged", "session", t.id, "successor", m.peer, "err", err)
		if errors.Is(err, errUnfunded) {
			return &plan{reason: ReasonUnfunded}
		}
	}
	return &plan{reason: reason}
}

// funded returns the member already funded for m's peer in this session
// (the current successor, or one this turn opened a stream to), or m.
func (t *sessionTurn) funded(m *member) *member {
	if t.successor != nil && t.successor.peer == m.peer {
		return t.successor
	}
	for _, o := range t.opened {
		if o.peer == m.peer {
			return o
		}
	}
	return m
}
