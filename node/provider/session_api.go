package provider

import "github.com/tenzrod/tenzrod/p2p/sessioncache"

// StandbyKey is the X-Wing public key this provider announces for sealed
// session states (what a gateway puts in infer.SessionTurn.SuccessorKey),
// nil without [provider.standby].
func (p *Provider) StandbyKey() []byte {
	if p.sess.key == nil {
		return nil
	}
	return p.sess.key.Public()
}

// HeldSession describes what this successor holds of a session.
type HeldSession struct {
	Assignment sessioncache.Assignment
	Turn       uint32 // the turn of the latest state held; 0 before the first
	Tokens     int    // the state's conversation length
	Warm       bool   // no pre-fill of it pending: a failover turn is served from cache
}

// HeldSession reports what this provider holds as the session's
// successor; false when it stands by for no such session.
func (p *Provider) HeldSession(id string) (HeldSession, bool) {
	if p.sess.hold == nil {
		return HeldSession{}, false
	}
	a, st, ok := p.sess.hold.Get(id)
	if !ok {
		return HeldSession{}, false
	}
	h := HeldSession{Assignment: a}
	if st != nil {
		h.Turn, h.Tokens = st.Turn, len(st.Tokens)
	}
	p.sess.mu.Lock()
	h.Warm = st != nil && p.sess.warming[id] == nil
	p.sess.mu.Unlock()
	return h, true
}
