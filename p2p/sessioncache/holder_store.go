package sessioncache

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// heldRecord is one held session as its Holder persists it: the gateway's
// signed statement and the latest state exactly as the primary sealed it,
// so a restarted successor re-verifies both with its own keys and stays
// warm without trusting its disk more than the wire.
type heldRecord struct {
	Gateway []byte            `cbor:"1,keyasint"`
	Assign  *SignedAssignment `cbor:"2,keyasint"`
	Sealed  []byte            `cbor:"3,keyasint,omitempty"`
}

// Restored is one session a Holder took back from its store.
type Restored struct {
	Gateway peer.ID
	A       Assignment
	State   *State // nil: assigned, no state received yet
}

// persist writes session id's record; the caller passes what it read
// under mu. A failed write only costs warmth after a restart.
func (h *Holder) persist(id string, gateway peer.ID, stmt *SignedAssignment, sealed []byte) {
	if h.cfg.Store == nil || stmt == nil {
		return
	}
	b, err := cborx.Marshal(&heldRecord{Gateway: []byte(gateway), Assign: stmt, Sealed: sealed})
	if err == nil {
		err = h.cfg.Store.Put(id, b)
	}
	if err != nil {
		h.cfg.Log.Warn("session-cache: persist a held session", "session", id, "err", err)
	}
}

func (h *Holder) unpersist(id string) {
	if h.cfg.Store == nil {
		return
	}
	if err := h.cfg.Store.Delete(id); err != nil {
		h.cfg.Log.Warn("session-cache: forget a held session", "session", id, "err", err)
	}
}

// Restore takes back the sessions the store holds, each re-verified: the
// gateway's signature on its assignment, and the sealed state opened with
// this node's key and checked against the assignment. A record that fails
// is deleted. The caller re-checks funding and pre-fills the states.
func (h *Holder) Restore() ([]Restored, error) {
	if h.cfg.Store == nil {
		return nil, nil
	}
	recs, err := h.cfg.Store.All()
	if err != nil {
		return nil, fmt.Errorf("sessioncache: restore: %w", err)
	}
	var out []Restored
	for id, b := range recs {
		r, sealed, err := h.restoreOne(id, b)
		if err != nil {
			h.cfg.Log.Warn("session-cache: drop a stored session", "session", id, "err", err)
			h.unpersist(id)
			continue
		}
		h.mu.Lock()
		if len(h.sessions) >= h.cfg.MaxSessions {
			h.mu.Unlock()
			h.unpersist(id)
			continue
		}
		e := &held{a: r.A, stmt: sealed.stmt, gateway: r.Gateway, state: r.State, hash: sealed.hash, sealed: sealed.b, touched: h.cfg.Clock.Now()}
		h.sessions[id] = e
		h.mu.Unlock()
		out = append(out, r)
	}
	return out, nil
}

type restoredSeal struct {
	stmt *SignedAssignment
	b    []byte
	hash []byte
}

func (h *Holder) restoreOne(id string, b []byte) (Restored, restoredSeal, error) {
	var rec heldRecord
	if err := cborx.UnmarshalCanonical(b, maxRecord, &rec); err != nil {
		return Restored{}, restoredSeal{}, fmt.Errorf("%w: stored record: %w", ErrMalformed, err)
	}
	if rec.Assign == nil {
		return Restored{}, restoredSeal{}, errors.New("sessioncache: stored record without its assignment")
	}
	gw, err := peer.IDFromBytes(rec.Gateway)
	if err != nil {
		return Restored{}, restoredSeal{}, fmt.Errorf("sessioncache: stored gateway: %w", err)
	}
	a, err := rec.Assign.Verify(gw)
	if err != nil {
		return Restored{}, restoredSeal{}, err
	}
	if a.SessionID != id {
		return Restored{}, restoredSeal{}, fmt.Errorf("sessioncache: stored under %q, assigned for %q", id, a.SessionID)
	}
	r := Restored{Gateway: gw, A: a}
	rs := restoredSeal{stmt: rec.Assign}
	if len(rec.Sealed) == 0 {
		return r, rs, nil
	}
	env, sealed, err := OpenEnvelope(rec.Sealed)
	if err != nil {
		return Restored{}, restoredSeal{}, err
	}
	// The primary's certificate and signature are checked again, the
	// certificate at its own start: the state was accepted while it was
	// valid, and a session key's short life must not cool a successor.
	notBefore, _ := env.Cert.Validity()
	if err := env.Cert.Verify(identity.MachineID(a.PrimaryMachine), notBefore); err != nil {
		return Restored{}, restoredSeal{}, fmt.Errorf("sessioncache: stored state: %w", err)
	}
	if !bytes.Equal(env.Cert.PeerID, []byte(a.PrimaryPeer)) {
		return Restored{}, restoredSeal{}, errors.New("sessioncache: stored state signed by another peer than the primary")
	}
	if err := env.VerifySignature(); err != nil {
		return Restored{}, restoredSeal{}, fmt.Errorf("sessioncache: stored state: %w", err)
	}
	st, hash, err := h.cfg.Key.open(sealed)
	if err != nil {
		return Restored{}, restoredSeal{}, err
	}
	if st.SessionID != id || !bytes.Equal(st.ModelID, a.ModelID) {
		return Restored{}, restoredSeal{}, fmt.Errorf("sessioncache: stored state of session %q model %x, assigned %q model %x", st.SessionID, st.ModelID, id, a.ModelID)
	}
	r.State, rs.b, rs.hash = st, rec.Sealed, hash
	return r, rs, nil
}
