package gateway

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// member is one provider in a session: its primary or its successor.
type member struct {
	peer     peer.ID
	machine  identity.MachineID
	operator string // on-chain operator account, "" off chain
	region   string
	fee      uint64 // standby fee per hour it announced (a successor's)
	key      []byte // its announced X-Wing key (a successor's)
	stream   string // the stream escrow paying its standby, "" when none
}

func (m *member) view() *SessionPeer {
	if m == nil {
		return nil
	}
	return &SessionPeer{Peer: m.peer.String(), Machine: m.machine.String()}
}

// sessionEntry is one session the gateway keeps. Its fields are guarded
// by the table's mutex.
type sessionEntry struct {
	id           string
	model        []byte // the catalog ID, set by the first turn
	payer        string
	continuity   Continuity
	jurisdiction string
	primary      *member // nil until a turn was served
	successor    *member
	reason       string // why successor is nil
	turn         uint32 // turns served
	// sealed is the last turn whose primary was told of the current
	// successor: the state the successor should hold.
	sealed           uint32
	created, lastUse time.Time
	busy             bool // a turn (or a successor's replacement) is in flight
	checking         bool // a challenge of the successor is in flight
	checkedAt        time.Time
	level            terms.Verification
	failovers        uint32
	// failed are the successors that failed a challenge: never this
	// session's again.
	failed map[peer.ID]bool
}

// sessionTable is the bounded map of sessions by ID.
type sessionTable struct {
	mu        sync.Mutex
	m         map[string]*sessionEntry
	perPayer  map[string]int // sessions held per payer
	max       int
	maxPayer  int
	idle      time.Duration
	lastSweep time.Time
}

func newSessionTable(c SessionConfig) *sessionTable {
	return &sessionTable{m: map[string]*sessionEntry{}, perPayer: map[string]int{}, max: c.MaxSessions, maxPayer: c.MaxPerBuyer, idle: c.IdleTimeout}
}

// remove drops session id; the caller holds mu.
func (t *sessionTable) remove(id string) {
	e, ok := t.m[id]
	if !ok {
		return
	}
	delete(t.m, id)
	if t.perPayer[e.payer]--; t.perPayer[e.payer] <= 0 {
		delete(t.perPayer, e.payer)
	}
}

// sessionIDMax bounds a session ID; IDs are URL-safe (A-Z a-z 0-9 - _).
const sessionIDMax = 64

// CheckSessionID accepts 1..64 URL-safe characters (A-Z, a-z, 0-9, '-', '_').
func CheckSessionID(id string) error {
	if id == "" || len(id) > sessionIDMax {
		return fmt.Errorf("session id must be 1..%d characters, got %d", sessionIDMax, len(id))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("session id may hold only A-Z, a-z, 0-9, '-' and '_' (byte %d is %q)", i, c)
		}
	}
	return nil
}

// newSessionID is 128 random bits, base64url without padding (22 chars).
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// begin finds or creates the session a turn belongs to and marks it busy.
// A session serves one turn at a time, its owner's only.
func (t *sessionTable) begin(sr *SessionRequest, payer string, now time.Time) (*sessionEntry, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := sr.ID
	if id != "" {
		if e, ok := t.m[id]; ok {
			switch {
			case e.payer != payer:
				return nil, false, &Error{Status: http.StatusConflict, Code: "session_conflict", Param: "tenzro.session.id",
					Message: fmt.Sprintf("session %s belongs to another buyer; start a new session without an id", id)}
			case e.busy:
				return nil, false, &Error{Status: http.StatusConflict, Code: "session_busy", Param: "tenzro.session.id",
					Message: fmt.Sprintf("session %s has a turn in flight; send the next turn when it is answered", id), RetryAfter: time.Second}
			}
			e.busy = true
			return e, false, nil
		}
	} else {
		id = newSessionID()
	}
	if t.perPayer[payer] >= t.maxPayer {
		return nil, false, &Error{Status: http.StatusTooManyRequests, Code: "too_many_sessions", RetryAfter: 10 * time.Second,
			Message: fmt.Sprintf("this buyer holds %d sessions, the limit of one buyer; reuse one, or retry when idle ones end (after %s)", t.perPayer[payer], t.idle)}
	}
	if len(t.m) >= t.max {
		return nil, false, &Error{Status: http.StatusServiceUnavailable, Code: "sessions_full", RetryAfter: 10 * time.Second,
			Message: fmt.Sprintf("this gateway holds %d sessions, its limit; retry when idle ones expire (after %s)", len(t.m), t.idle)}
	}
	e := &sessionEntry{id: id, payer: payer, continuity: sr.Continuity, jurisdiction: sr.Jurisdiction, created: now, lastUse: now, busy: true}
	t.m[id] = e
	t.perPayer[payer]++
	return e, true, nil
}

// expired removes every idle session not in a turn and returns them;
// persist records their removal (Gateway.persistLocked).
func (t *sessionTable) expired(now time.Time, persist func([]*sessionEntry, []string) func()) []*sessionEntry {
	t.mu.Lock()
	t.lastSweep = now
	var out []*sessionEntry
	var ids []string
	for id, e := range t.m {
		if !e.busy && now.Sub(e.lastUse) >= t.idle {
			t.remove(id)
			out = append(out, e)
			ids = append(ids, id)
		}
	}
	persisted := persist(nil, ids)
	t.mu.Unlock()
	persisted()
	return out
}

// sweepDue reports whether a lazy sweep is due (at most one a second).
func (t *sessionTable) sweepDue(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return now.Sub(t.lastSweep) >= time.Second
}

func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
