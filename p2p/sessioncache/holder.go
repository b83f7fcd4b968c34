package sessioncache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// ErrBehind marks a refusal that only time cures: the successor's copy of
// the chain has not reached the block that funded the assignment yet.
// Its answer is CodeRetry, so the gateway asks again.
var ErrBehind = errors.New("sessioncache: this node's chain is behind the assignment")

// Rejection is a refusal with its counted reason.
type Rejection struct {
	Reason string
	Err    error
}

func (r *Rejection) Error() string { return fmt.Sprintf("sessioncache: %s: %v", r.Reason, r.Err) }
func (r *Rejection) Unwrap() error { return r.Err }

func reject(reason string, format string, args ...any) *Rejection {
	return &Rejection{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// HolderConfig is what a successor stands by with.
type HolderConfig struct {
	// Key is the X-Wing key pair whose public half the node announces.
	Key *PrivateKey
	// Session signs challenge proofs (the node's certified session key).
	Session func() (*identity.Session, error)
	// Standby reports whether the node stands by for a model; nil: none.
	Standby func(modelID []byte) bool
	// Fund, when set (a chain), accepts an assignment only against a
	// funded standby stream; nil accepts without one.
	Fund func(ctx context.Context, gateway peer.ID, a Assignment) error
	// OnState is called with every state stored, before the sender gets
	// its answer: the node starts pre-filling its engine with it. It must
	// not block (start the work in the background).
	OnState func(a Assignment, st *State)
	// MaxSessions bounds the sessions held (default 1024); the least
	// recently touched goes first.
	MaxSessions int
	// Store, when set, keeps each held session (the assignment and the
	// state as sealed) so a restarted successor is still warm (Restore).
	Store   Store
	Clock   clock.Clock
	Metrics *Metrics
	Log     *slog.Logger
}

// DefaultMaxSessions is HolderConfig.MaxSessions' default.
const DefaultMaxSessions = 1024

// Holder is the successor side: the sessions assigned to it and the latest
// verified state of each, in memory and, with a Store, on disk (a
// successor restarted without its state answers challenges so, and the
// gateway then stops its stream).
type Holder struct {
	cfg      HolderConfig
	keyHash  [32]byte
	mu       sync.Mutex
	sessions map[string]*held
}

type held struct {
	a       Assignment
	stmt    *SignedAssignment // the gateway's statement, kept
	gateway peer.ID
	state   *State
	hash    []byte
	sealed  []byte // state as received, what is persisted
	touched time.Time
}

// NewHolder makes a holder.
func NewHolder(cfg HolderConfig) (*Holder, error) {
	if cfg.Key == nil || cfg.Session == nil {
		return nil, errors.New("sessioncache: holder needs a key and a session")
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(nil)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Holder{cfg: cfg, keyHash: sha256.Sum256(cfg.Key.pub), sessions: map[string]*held{}}, nil
}

// PublicKey is the X-Wing key states must be sealed to.
func (h *Holder) PublicKey() []byte { return h.cfg.Key.Public() }

func (h *Holder) count(err error) error {
	var r *Rejection
	if errors.As(err, &r) {
		h.cfg.Metrics.Rejected.WithLabelValues(r.Reason).Inc()
	}
	return err
}

// Assign takes the session of a signed assignment from gateway.
func (h *Holder) Assign(ctx context.Context, gateway peer.ID, s *SignedAssignment) error {
	return h.count(h.assign(ctx, gateway, s))
}

func (h *Holder) assign(ctx context.Context, gateway peer.ID, s *SignedAssignment) error {
	a, err := s.Verify(gateway)
	switch {
	case errors.Is(err, ErrMalformed):
		return &Rejection{ReasonMalformed, err}
	case err != nil:
		return &Rejection{ReasonBadSignature, err}
	}
	if h.cfg.Standby == nil || !h.cfg.Standby(a.ModelID) {
		return reject(ReasonNotStandby, "this node does not stand by for model %x", a.ModelID)
	}
	if h.cfg.Fund != nil {
		if err := h.cfg.Fund(ctx, gateway, a); err != nil {
			return &Rejection{ReasonUnfunded, err}
		}
	}
	h.mu.Lock()
	e := h.sessions[a.SessionID]
	var evicted string
	if e == nil {
		evicted = h.evictLocked()
		e = &held{}
		h.sessions[a.SessionID] = e
	} else if e.state != nil && !bytes.Equal(e.state.ModelID, a.ModelID) {
		// The session changed model: what it held is of no use.
		e.state, e.hash, e.sealed = nil, nil, nil
	}
	// A new primary after a failover keeps the turn held, so no state
	// older than it is taken from anyone.
	e.a, e.stmt, e.gateway, e.touched = a, s, gateway, h.cfg.Clock.Now()
	sealed := e.sealed
	h.mu.Unlock()
	if evicted != "" {
		h.unpersist(evicted)
	}
	h.persist(a.SessionID, gateway, s, sealed)
	h.cfg.Metrics.Assigned.Inc()
	return nil
}

// evictLocked makes room for one more session and returns the one it
// dropped ("" for none).
func (h *Holder) evictLocked() (gone string) {
	for len(h.sessions) >= h.cfg.MaxSessions {
		var oldest string
		var at time.Time
		for id, e := range h.sessions {
			if oldest == "" || e.touched.Before(at) {
				oldest, at = id, e.touched
			}
		}
		delete(h.sessions, oldest)
		gone = oldest
	}
	return gone
}

// Accept verifies a sealed state from peer from and stores it.
func (h *Holder) Accept(from peer.ID, b []byte) error {
	a, st, err := h.accept(from, b)
	if err != nil {
		return h.count(err)
	}
	h.cfg.Metrics.Accepted.Inc()
	if h.cfg.OnState != nil {
		h.cfg.OnState(a, st)
	}
	return nil
}

func (h *Holder) accept(from peer.ID, b []byte) (Assignment, *State, error) {
	env, sealed, err := OpenEnvelope(b)
	if err != nil {
		return Assignment{}, nil, &Rejection{ReasonMalformed, err}
	}
	h.mu.Lock()
	e := h.sessions[sealed.SessionID]
	var a Assignment
	var turn uint32
	if e != nil {
		a = e.a
		if e.state != nil {
			turn = e.state.Turn
		}
	}
	h.mu.Unlock()
	if e == nil {
		return a, nil, reject(ReasonUnassigned, "session %q is not assigned here", sealed.SessionID)
	}
	if from != a.PrimaryPeer {
		return a, nil, reject(ReasonWrongPrimary, "sent by %s, the session's primary is %s", from, a.PrimaryPeer)
	}
	if err := env.Cert.Verify(identity.MachineID(a.PrimaryMachine), h.cfg.Clock.Now()); err != nil {
		return a, nil, &Rejection{ReasonWrongPrimary, err}
	}
	if !bytes.Equal(env.Cert.PeerID, []byte(from)) {
		return a, nil, reject(ReasonWrongPrimary, "certificate of another peer")
	}
	if err := env.VerifySignature(); err != nil {
		return a, nil, &Rejection{ReasonAltered, err}
	}
	if !bytes.Equal(sealed.Recipient, h.keyHash[:]) {
		return a, nil, reject(ReasonWrongKey, "sealed to key %x, this node's is %x", sealed.Recipient[:8], h.keyHash[:8])
	}
	if sealed.Turn <= turn {
		return a, nil, reject(ReasonReplayed, "turn %d, this node holds turn %d", sealed.Turn, turn)
	}
	st, hash, err := h.cfg.Key.open(sealed)
	switch {
	case errors.Is(err, ErrMalformed):
		return a, nil, &Rejection{ReasonMalformed, err}
	case err != nil:
		return a, nil, &Rejection{ReasonAltered, err}
	}
	if !bytes.Equal(st.ModelID, a.ModelID) {
		return a, nil, reject(ReasonWrongModel, "state of model %x, assigned %x", st.ModelID, a.ModelID)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e = h.sessions[sealed.SessionID]
	if e == nil || e.a.PrimaryPeer != a.PrimaryPeer {
		return a, nil, reject(ReasonUnassigned, "session %q was reassigned meanwhile", sealed.SessionID)
	}
	if e.state != nil && st.Turn <= e.state.Turn {
		return a, nil, reject(ReasonReplayed, "turn %d, this node holds turn %d", st.Turn, e.state.Turn)
	}
	e.state, e.hash, e.sealed, e.touched = st, hash, b, h.cfg.Clock.Now()
	// Written before the sender's answer: a state acknowledged is one a
	// restart keeps.
	h.persist(sealed.SessionID, e.gateway, e.stmt, b)
	return e.a, st, nil
}

// Get returns a session's assignment and latest state (nil before the
// first).
func (h *Holder) Get(sessionID string) (Assignment, *State, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.sessions[sessionID]
	if e == nil {
		return Assignment{}, nil, false
	}
	return e.a, e.state, true
}

// Forget drops a session (it ended, or this node became its primary).
func (h *Holder) Forget(sessionID string) {
	h.mu.Lock()
	delete(h.sessions, sessionID)
	h.mu.Unlock()
	h.unpersist(sessionID)
}

// Len is the number of sessions held.
func (h *Holder) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// Prove answers a challenge: the turn and state hash held, signed.
func (h *Holder) Prove(sessionID string, nonce []byte) ([]byte, error) {
	h.mu.Lock()
	e := h.sessions[sessionID]
	var p Proof
	if e != nil {
		p = Proof{SessionID: sessionID, Nonce: nonce, StateHash: e.hash}
		if e.state != nil {
			p.Turn = e.state.Turn
		}
	}
	h.mu.Unlock()
	if e == nil {
		return nil, h.count(reject(ReasonUnassigned, "session %q is not held here", sessionID))
	}
	if p.StateHash == nil {
		p.StateHash = []byte{}
	}
	sess, err := h.cfg.Session()
	if err != nil {
		return nil, fmt.Errorf("sessioncache: prove: %w", err)
	}
	payload, err := cborx.Marshal(&p)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: prove: %w", err)
	}
	env, err := sess.Seal(ProofDomain, ProofPayloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: prove: %w", err)
	}
	return env.Marshal()
}
