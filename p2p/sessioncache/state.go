package sessioncache

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// State is what a successor needs to serve a session's next turn warm:
// the token IDs of the conversation so far (as the next turn's prompt
// will share them), the model and the sampling.
type State struct {
	SessionID string                 `cbor:"1,keyasint"`
	Turn      uint32                 `cbor:"2,keyasint"` // the turn these tokens follow, 1-based
	ModelID   []byte                 `cbor:"3,keyasint"`
	Tokens    []uint32               `cbor:"4,keyasint"`
	Sampling  receipt.SamplingParams `cbor:"5,keyasint"`
}

// Check validates the state's fields.
func (s *State) Check() error {
	if err := checkSessionID(s.SessionID); err != nil {
		return err
	}
	switch {
	case s.Turn == 0:
		return fmt.Errorf("turn must be at least 1")
	case len(s.ModelID) != ModelIDSize:
		return fmt.Errorf("model ID of %d bytes, want %d", len(s.ModelID), ModelIDSize)
	case len(s.Tokens) == 0 || len(s.Tokens) > MaxStateTokens:
		return fmt.Errorf("%d tokens, want 1..%d", len(s.Tokens), MaxStateTokens)
	}
	for i, t := range s.Tokens {
		if t >= 1<<31 {
			return fmt.Errorf("token %d: ID %d out of range", i, t)
		}
	}
	return nil
}

// Ints returns the tokens as an engine takes them.
func (s *State) Ints() []int {
	out := make([]int, len(s.Tokens))
	for i, t := range s.Tokens {
		out[i] = int(t)
	}
	return out
}

// Marshal returns the state's canonical encoding, the plaintext sealed.
func (s *State) Marshal() ([]byte, error) {
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("sessioncache: state: %w", err)
	}
	b, err := cborx.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: encode state: %w", err)
	}
	return b, nil
}

// DecodeState strictly decodes and checks a state's plaintext.
func DecodeState(b []byte) (*State, error) {
	s := new(State)
	if err := cborx.UnmarshalCanonical(b, MaxFrameSize, s); err != nil {
		return nil, fmt.Errorf("%w: state: %w", ErrMalformed, err)
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%w: state: %w", ErrMalformed, err)
	}
	return s, nil
}

// Hash is the SHA-256 of a state's plaintext: what the AAD binds and a
// challenge proves.
func Hash(plaintext []byte) [HashSize]byte { return sha256.Sum256(plaintext) }

// AAD is the associated data of a sealed state: uvarint(len(session ID)) ‖
// session ID ‖ turn (4 bytes, big-endian) ‖ state hash.
func AAD(sessionID string, turn uint32, stateHash []byte) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+len(sessionID)+4+len(stateHash))
	b = binary.AppendUvarint(b, uint64(len(sessionID)))
	b = append(b, sessionID...)
	b = binary.BigEndian.AppendUint32(b, turn)
	return append(b, stateHash...)
}
