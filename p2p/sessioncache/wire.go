package sessioncache

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// ProtocolID is the libp2p protocol of session-cache exchanges.
const ProtocolID = "/tenzro/session-cache/1.0.0"

// ServiceName is the resource-manager service both ends attach streams to.
const ServiceName = p2p.ServiceSessionCache

// Limits.
const (
	// MaxStateTokens bounds the conversation a state carries.
	MaxStateTokens = 1 << 16
	// MaxFrameSize caps every frame: a full state's tokens (at most 5 CBOR
	// bytes each), sealed, in a signed envelope with its certificate.
	MaxFrameSize = 1 << 20
	// MaxSessionIDLen bounds a session ID (as p2p/infer does).
	MaxSessionIDLen = 256
	// MaxReasonLen bounds an answer's reason.
	MaxReasonLen = 256
	// NonceSize is a challenge nonce's size.
	NonceSize = 16
	// MachineIDSize and ModelIDSize are the sizes of those IDs.
	MachineIDSize = 32
	ModelIDSize   = 32
	// HashSize is a SHA-256 digest's size.
	HashSize = 32
)

// Answer codes.
const (
	CodeOK uint32 = 0
	// CodeRefused: the successor refused the request for good (the reason
	// says why: not standing by for the model, unfunded, a rejected
	// state).
	CodeRefused uint32 = 1
	// CodeUnknown: the successor holds no such session.
	CodeUnknown uint32 = 2
	// CodeRetry: a transient failure; try again.
	CodeRetry uint32 = 3
)

// ErrMalformed marks a frame that does not decode or breaks a limit.
var ErrMalformed = errors.New("sessioncache: malformed frame")

// Request is the one frame a client sends: exactly one of its fields.
type Request struct {
	State     []byte            `cbor:"1,keyasint,omitempty"` // a sealed state (Seal)
	Assign    *SignedAssignment `cbor:"2,keyasint,omitempty"`
	Challenge *ChallengeRequest `cbor:"3,keyasint,omitempty"`
}

// ChallengeRequest asks the successor to prove what it holds of a session.
type ChallengeRequest struct {
	SessionID string `cbor:"1,keyasint"`
	Nonce     []byte `cbor:"2,keyasint"`
}

// Answer is the server's one frame.
type Answer struct {
	Code   uint32 `cbor:"1,keyasint,omitempty"`
	Reason string `cbor:"2,keyasint,omitempty"`
	// Proof answers a challenge: an envelope of a Proof signed by the
	// successor's session key.
	Proof []byte `cbor:"3,keyasint,omitempty"`
}

func checkSessionID(id string) error {
	if id == "" || len(id) > MaxSessionIDLen || !utf8.ValidString(id) {
		return fmt.Errorf("session ID must be 1..%d bytes of UTF-8", MaxSessionIDLen)
	}
	return nil
}

// DecodeRequest strictly decodes a request frame.
func DecodeRequest(b []byte) (*Request, error) {
	r := new(Request)
	if err := cborx.UnmarshalCanonical(b, MaxFrameSize, r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	n := 0
	if len(r.State) > 0 {
		n++
	}
	if r.Assign != nil {
		n++
	}
	if r.Challenge != nil {
		n++
		if err := checkSessionID(r.Challenge.SessionID); err != nil {
			return nil, fmt.Errorf("%w: challenge: %w", ErrMalformed, err)
		}
		if len(r.Challenge.Nonce) != NonceSize {
			return nil, fmt.Errorf("%w: challenge nonce of %d bytes, want %d", ErrMalformed, len(r.Challenge.Nonce), NonceSize)
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("%w: %d requests in one frame, want 1", ErrMalformed, n)
	}
	return r, nil
}

// DecodeAnswer strictly decodes an answer frame.
func DecodeAnswer(b []byte) (*Answer, error) {
	a := new(Answer)
	if err := cborx.UnmarshalCanonical(b, MaxFrameSize, a); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(a.Reason) > MaxReasonLen || !utf8.ValidString(a.Reason) {
		return nil, fmt.Errorf("%w: reason longer than %d bytes or not UTF-8", ErrMalformed, MaxReasonLen)
	}
	if a.Code > CodeRetry {
		return nil, fmt.Errorf("%w: unknown code %d", ErrMalformed, a.Code)
	}
	return a, nil
}

func encode(what string, v any) ([]byte, error) {
	b, err := cborx.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: encode %s: %w", what, err)
	}
	if len(b) > MaxFrameSize {
		return nil, fmt.Errorf("sessioncache: %s of %d bytes exceeds %d", what, len(b), MaxFrameSize)
	}
	return b, nil
}

// clip bounds a reason at MaxReasonLen bytes of valid UTF-8.
func clip(s string) string { return p2p.Clip(s, MaxReasonLen) }
