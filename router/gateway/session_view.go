package gateway

import "encoding/hex"

// SessionView is one session as tenzro_getSession shows it.
type SessionView struct {
	ID              string      `json:"id"`
	Model           string      `json:"model_id"`
	Payer           string      `json:"payer"`
	Continuity      string      `json:"continuity"`
	Jurisdiction    string      `json:"jurisdiction,omitempty"`
	Turn            uint32      `json:"turn"`
	Primary         *MemberView `json:"primary"`
	Successor       *MemberView `json:"successor"`
	SuccessorReason string      `json:"successor_reason,omitempty"`
	Failovers       uint32      `json:"failovers"`
	CreatedMs       int64       `json:"created_ms"`
	LastUseMs       int64       `json:"last_use_ms"`
	IdleExpiresMs   int64       `json:"idle_expires_ms"`
	InTurn          bool        `json:"in_turn"`
}

// MemberView is a session's primary or successor.
type MemberView struct {
	Peer       string `json:"peer"`
	Machine    string `json:"machine"`
	Operator   string `json:"operator,omitempty"`
	Region     string `json:"region,omitempty"`
	FeePerHour uint64 `json:"standby_fee_per_hour,omitempty"`
	// StreamID is the stream escrow paying its standby (a successor's).
	StreamID string `json:"stream_id,omitempty"`
}

func (m *member) full() *MemberView {
	if m == nil {
		return nil
	}
	return &MemberView{Peer: m.peer.String(), Machine: m.machine.String(), Operator: m.operator, Region: m.region, FeePerHour: m.fee, StreamID: m.stream}
}

// Session returns the session id, false when the gateway holds none.
func (g *Gateway) Session(id string) (SessionView, bool) {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	e, ok := g.sessions.m[id]
	if !ok {
		return SessionView{}, false
	}
	v := SessionView{ID: e.id, Payer: e.payer, Continuity: e.continuity.String(), Jurisdiction: e.jurisdiction, Turn: e.turn,
		Primary: e.primary.full(), Successor: e.successor.full(), Failovers: e.failovers,
		CreatedMs: e.created.UnixMilli(), LastUseMs: e.lastUse.UnixMilli(), IdleExpiresMs: e.lastUse.Add(g.sessions.idle).UnixMilli(), InTurn: e.busy}
	if e.model != nil {
		v.Model = hex.EncodeToString(e.model)
	}
	if e.successor == nil {
		v.SuccessorReason = e.reason
	}
	return v, true
}
