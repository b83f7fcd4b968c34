package sessioncache

import (
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// AssignDomain prefixes the bytes a gateway's assignment signature covers.
const AssignDomain = "tenzro/v1/session-assign"

// AccountSize is an on-chain account ID's size (an Ed25519 public key).
const AccountSize = 32

// Assignment tells a successor it stands by for a session: which machine
// is primary (the only one whose states it takes), who pays and, on a
// chain, the stream escrow paying the standby (empty when the chain is
// off).
type Assignment struct {
	SessionID      string
	ModelID        []byte
	PrimaryPeer    peer.ID
	PrimaryMachine []byte
	Payer          []byte
	StreamID       []byte
	// StreamHeight is the block that committed the stream, as the gateway
	// saw it: a successor whose own copy of the chain is behind waits for
	// that block instead of refusing an assignment funded a moment ago.
	StreamHeight int64
}

// assignmentWire is an Assignment as signed and sent (a peer ID as bytes:
// CBOR text must be UTF-8).
type assignmentWire struct {
	SessionID      string `cbor:"1,keyasint"`
	ModelID        []byte `cbor:"2,keyasint"`
	PrimaryPeer    []byte `cbor:"3,keyasint"`
	PrimaryMachine []byte `cbor:"4,keyasint"`
	Payer          []byte `cbor:"5,keyasint,omitempty"`
	StreamID       []byte `cbor:"6,keyasint,omitempty"`
	StreamHeight   int64  `cbor:"7,keyasint,omitempty"`
}

// Check validates an assignment's fields.
func (a *Assignment) Check() error {
	if err := checkSessionID(a.SessionID); err != nil {
		return err
	}
	switch {
	case len(a.ModelID) != ModelIDSize:
		return fmt.Errorf("model ID of %d bytes, want %d", len(a.ModelID), ModelIDSize)
	case a.PrimaryPeer == "" || len(a.PrimaryPeer) > 128:
		return errors.New("primary peer missing or over 128 bytes")
	case len(a.PrimaryMachine) != MachineIDSize:
		return fmt.Errorf("primary machine of %d bytes, want %d", len(a.PrimaryMachine), MachineIDSize)
	case len(a.Payer) != 0 && len(a.Payer) != AccountSize:
		return fmt.Errorf("payer of %d bytes, want %d or none", len(a.Payer), AccountSize)
	case len(a.StreamID) != 0 && len(a.StreamID) != HashSize:
		return fmt.Errorf("stream ID of %d bytes, want %d or none", len(a.StreamID), HashSize)
	case len(a.StreamID) != 0 && len(a.Payer) == 0:
		return errors.New("a stream ID needs a payer")
	case a.StreamHeight < 0 || (a.StreamHeight != 0 && len(a.StreamID) == 0):
		return fmt.Errorf("stream height %d without a stream, or negative", a.StreamHeight)
	}
	if _, err := peer.IDFromBytes([]byte(a.PrimaryPeer)); err != nil {
		return fmt.Errorf("primary peer: %w", err)
	}
	return nil
}

// SignedAssignment is an assignment with the gateway's libp2p signature,
// kept by the successor as the gateway's statement.
type SignedAssignment struct {
	Assignment []byte `cbor:"1,keyasint"` // canonical CBOR of the assignment
	PubKey     []byte `cbor:"2,keyasint"` // the gateway's libp2p public key (marshalled)
	Sig        []byte `cbor:"3,keyasint"`
}

func assignBytes(enc []byte) []byte { return append([]byte(AssignDomain), enc...) }

// SignAssignment signs a with the gateway's libp2p key.
func SignAssignment(key crypto.PrivKey, a Assignment) (*SignedAssignment, error) {
	if key == nil {
		return nil, errors.New("sessioncache: assignment: no signing key")
	}
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("sessioncache: assignment: %w", err)
	}
	enc, err := cborx.Marshal(&assignmentWire{SessionID: a.SessionID, ModelID: a.ModelID, PrimaryPeer: []byte(a.PrimaryPeer),
		PrimaryMachine: a.PrimaryMachine, Payer: a.Payer, StreamID: a.StreamID, StreamHeight: a.StreamHeight})
	if err != nil {
		return nil, fmt.Errorf("sessioncache: encode assignment: %w", err)
	}
	sig, err := key.Sign(assignBytes(enc))
	if err != nil {
		return nil, fmt.Errorf("sessioncache: sign assignment: %w", err)
	}
	pub, err := crypto.MarshalPublicKey(key.GetPublic())
	if err != nil {
		return nil, fmt.Errorf("sessioncache: assignment key: %w", err)
	}
	return &SignedAssignment{Assignment: enc, PubKey: pub, Sig: sig}, nil
}

// errBadAssignSig marks an assignment not signed by the peer that sent it.
var errBadAssignSig = errors.New("sessioncache: assignment not signed by its sender")

// Verify checks that s is signed by from's key and returns the
// assignment.
func (s *SignedAssignment) Verify(from peer.ID) (Assignment, error) {
	var w assignmentWire
	if err := cborx.UnmarshalCanonical(s.Assignment, MaxFrameSize, &w); err != nil {
		return Assignment{}, fmt.Errorf("%w: assignment: %w", ErrMalformed, err)
	}
	a := Assignment{SessionID: w.SessionID, ModelID: w.ModelID, PrimaryPeer: peer.ID(w.PrimaryPeer),
		PrimaryMachine: w.PrimaryMachine, Payer: w.Payer, StreamID: w.StreamID, StreamHeight: w.StreamHeight}
	if err := a.Check(); err != nil {
		return Assignment{}, fmt.Errorf("%w: assignment: %w", ErrMalformed, err)
	}
	if len(s.PubKey) > 1024 || len(s.Sig) > 1024 {
		return Assignment{}, fmt.Errorf("%w: assignment key or signature over 1024 bytes", ErrMalformed)
	}
	pub, err := crypto.UnmarshalPublicKey(s.PubKey)
	if err != nil {
		return Assignment{}, fmt.Errorf("%w: %w", errBadAssignSig, err)
	}
	if id, err := peer.IDFromPublicKey(pub); err != nil || id != from {
		return Assignment{}, fmt.Errorf("%w: key of another peer", errBadAssignSig)
	}
	if ok, err := pub.Verify(assignBytes(s.Assignment), s.Sig); err != nil || !ok {
		return Assignment{}, errBadAssignSig
	}
	return a, nil
}

// The envelope of a challenge's proof.
const (
	ProofDomain      = "tenzro/v1/session-proof"
	ProofPayloadType = "tenzro.session-proof"
)

// Proof is a successor's signed answer to a challenge.
type Proof struct {
	SessionID string `cbor:"1,keyasint"`
	Nonce     []byte `cbor:"2,keyasint"`
	Turn      uint32 `cbor:"3,keyasint"`
	StateHash []byte `cbor:"4,keyasint"`
}
