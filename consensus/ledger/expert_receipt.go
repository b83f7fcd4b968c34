package ledger

import (
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Expert receipt format as the chain reads it. p2p/expert signs these
// (its Receipt and Entry, whose tests check this decoder reads what it
// writes); the ledger decodes them itself because p2p/expert imports the
// ledger, not the reverse.
const (
	ExpertReceiptPayloadType = "tenzro.expert-receipt.v1"
	// MaxExpertReceiptPayload bounds an encoded expert receipt payload.
	MaxExpertReceiptPayload = 64 << 10
	// MaxExpertReceiptBytes bounds an expert receipt envelope.
	MaxExpertReceiptBytes = MaxExpertReceiptPayload + identity.EnvelopeOverhead
)

// ExpertReceipt is a holder's signed statement of one exchange of one
// layer: per batch, the expert, positions, and the SHA-256 of the exact
// input and output bytes.
type ExpertReceipt struct {
	Model   [32]byte      `cbor:"1,keyasint"`
	Layer   uint32        `cbor:"2,keyasint"`
	Machine []byte        `cbor:"3,keyasint"`
	Peer    []byte        `cbor:"4,keyasint"`
	TimeMs  int64         `cbor:"5,keyasint"`
	Entries []ExpertEntry `cbor:"6,keyasint"`
}

// ExpertEntry is one expert batch of an ExpertReceipt.
type ExpertEntry struct {
	Expert     uint32   `cbor:"1,keyasint"`
	Positions  []uint32 `cbor:"2,keyasint"`
	InputHash  [32]byte `cbor:"3,keyasint"`
	OutputHash [32]byte `cbor:"4,keyasint"`
}

// ParseExpertReceipt strictly decodes an expert receipt envelope and its
// payload without verifying any signature.
func ParseExpertReceipt(b []byte) (*identity.Envelope, *ExpertReceipt, error) {
	env, err := identity.UnmarshalEnvelope(b, MaxExpertReceiptBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: expert receipt: %w", err)
	}
	if env.Domain != ExpertReceiptDomain || env.PayloadType != ExpertReceiptPayloadType {
		return nil, nil, fmt.Errorf("ledger: expert receipt: domain %q, payload type %q, want %q, %q",
			env.Domain, env.PayloadType, ExpertReceiptDomain, ExpertReceiptPayloadType)
	}
	r := new(ExpertReceipt)
	if err := cborx.UnmarshalCanonical(env.Payload, MaxExpertReceiptPayload, r); err != nil {
		return nil, nil, fmt.Errorf("ledger: expert receipt payload: %w", err)
	}
	return env, r, nil
}
