package gateway

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Continuity is what a session asks of its successor.
type Continuity uint8

const (
	// ContinuityOff pins the session to its primary without a successor.
	ContinuityOff Continuity = iota
	// ContinuityOn assigns a successor when one is eligible and proceeds
	// without one (saying why) when none is.
	ContinuityOn
	// ContinuityRequired refuses a turn (409 no_successor) when no
	// successor can be assigned.
	ContinuityRequired
)

func (c Continuity) String() string {
	switch c {
	case ContinuityOn:
		return "true"
	case ContinuityRequired:
		return "required"
	default:
		return "false"
	}
}

// SessionRequest is the request's `tenzro.session` (or X-Tenzro-Session).
type SessionRequest struct {
	// ID names an existing session; "" on a first turn makes the gateway
	// generate one.
	ID         string
	Continuity Continuity
	// Jurisdiction pins every provider of the session (primary and
	// successor) to a country code or a continent ("DE", "Europe"); a
	// continent is met by a provider announcing a country inside it.
	Jurisdiction string
}

// SessionPeer names one provider of a session.
type SessionPeer struct {
	Peer    string `json:"peer"`
	Machine string `json:"machine"`
}

// Where a turn was served, as SessionInfo.ServedBy says it.
const (
	ServedByPrimary   = "primary"   // the session's pinned primary (or the first turn's winner)
	ServedBySuccessor = "successor" // the successor, after a failover: it is now the primary
	// ServedByReplacement is a provider that was neither: primary and
	// successor were both unavailable, so the turn was served cold.
	ServedByReplacement = "replacement"
	// ServedByContinued is a turn whose stream broke mid-answer and was
	// finished by another provider (stream continuation): the race's
	// winner still holds the session, but it did not serve the whole turn.
	ServedByContinued = "continued"
)

// SessionInfo is the response's `tenzro.session`.
type SessionInfo struct {
	ID   string `json:"id"`
	Turn uint32 `json:"turn"`
	// Primary is the provider that served this turn.
	Primary   SessionPeer  `json:"primary"`
	Successor *SessionPeer `json:"successor"`
	// SuccessorReason says why Successor is null (a code, e.g. no_standby).
	SuccessorReason string `json:"successor_reason,omitempty"`
	ServedBy        string `json:"served_by"`
}

// SessionAssignment tells a successor which session it stands by for (the
// contract of p2p/sessioncache.Assignment, which the node adapts to).
type SessionAssignment struct {
	SessionID      string
	ModelID        []byte
	PrimaryPeer    peer.ID
	PrimaryMachine []byte
	Payer          []byte // the payer's account ID bytes; empty off chain
	StreamID       []byte // the stream escrow paying the standby; empty when none
	StreamHeight   int64  // the block that committed a stream opened for this assignment; 0 for an older one
}

// Successors reaches standby providers over /tenzro/session-cache/1.0.0.
type Successors interface {
	// Assign tells to that it stands by for a session and whose state to
	// expect.
	Assign(ctx context.Context, to peer.ID, a SessionAssignment) error
	// Challenge asks to for the latest turn (and its state hash) it holds
	// of the session.
	Challenge(ctx context.Context, to peer.ID, sessionID string) (turn uint32, stateHash []byte, err error)
}

// Operators names the on-chain operator account of a provider.
type Operators interface {
	// Operator returns the operator account (hex) of machine m registered
	// to peer p with a live bond; false when it is not so registered.
	Operator(ctx context.Context, p peer.ID, m identity.MachineID) (string, bool, error)
}

// StandbyStreams opens and stops the stream escrows paying standby
// successors from a payer's escrow, signed by this gateway as settler.
type StandbyStreams interface {
	// Open streams rate micro-units an hour, deposit at most, from payer's
	// escrow to the operator of payee, and returns the stream's ID (hex)
	// and the height of the block that committed it.
	Open(ctx context.Context, payer string, payee identity.MachineID, rate, deposit uint64) (string, int64, error)
	// Stop closes a stream: what accrued goes to the operator, the rest
	// back to the escrow.
	Stop(ctx context.Context, streamID string) error
}

// SessionConfig is [router.sessions].
type SessionConfig struct {
	// MaxSessions bounds the session table; a new session beyond it is
	// refused (503 sessions_full) until idle ones expire.
	MaxSessions int `toml:"max_sessions"`
	// MaxPerBuyer bounds one buyer's sessions (429 too_many_sessions), so
	// no buyer can fill the table for the others.
	MaxPerBuyer int `toml:"max_per_buyer"`
	// IdleTimeout ends a session no turn used for this long: its standby
	// stream is stopped.
	IdleTimeout time.Duration `toml:"idle_timeout"`
	// StandbyHorizon sizes a standby stream's deposit: rate × horizon.
	StandbyHorizon time.Duration `toml:"standby_horizon"`
	// ChallengeInterval is how often each successor must prove the state
	// it holds (besides at once when its heartbeats lapse): a dead one is
	// paid at most about this long.
	ChallengeInterval time.Duration `toml:"challenge_interval"`
}

// validSession checks a request's session options (400 naming the field).
func validSession(s *SessionRequest) error {
	if s == nil {
		return nil
	}
	bad := func(param, format string, args ...any) error {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Param: param, Message: fmt.Sprintf(format, args...)}
	}
	if s.ID != "" {
		if err := CheckSessionID(s.ID); err != nil {
			return bad("tenzro.session.id", "%v", err)
		}
	}
	if s.Continuity > ContinuityRequired {
		return bad("tenzro.session.continuity", "continuity must be true, false or \"required\"")
	}
	if s.Jurisdiction != "" {
		if err := gossip.CheckRegion(canonRegion(s.Jurisdiction)); err != nil {
			return bad("tenzro.session.jurisdiction", "jurisdiction: %v", err)
		}
	}
	return nil
}
