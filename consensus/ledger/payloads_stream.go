package ledger

import (
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// StreamOpen moves Deposit out of the available balance (balance −
// pending) of the spend escrow of (Payer, Settler) into a new stream
// paying the operator of machine Payee Rate micro-units per hour of block
// time. The signer must be the escrow's settler (for a payer's escrow with
// itself, the payer); Payer zero means the signer, Settler zero the
// signer. Payee must be registered with a live bond. The stream's ID
// (StreamID) is the applied transaction's result data.
type StreamOpen struct {
	Payer   terms.AccountID    `cbor:"1,keyasint"`
	Settler terms.AccountID    `cbor:"2,keyasint"`
	Payee   identity.MachineID `cbor:"3,keyasint"`
	Rate    uint64             `cbor:"4,keyasint"` // micro-units per hour
	Deposit uint64             `cbor:"5,keyasint"`
}

func (p *StreamOpen) validate() error {
	if p.Payee == (identity.MachineID{}) {
		return reject(CodeMalformed, "stream payee is the zero machine ID")
	}
	if err := nonZero("stream rate", p.Rate); err != nil {
		return err
	}
	return nonZero("stream deposit", p.Deposit)
}

// StreamClaim pays the payee's operator (the signer) what stream ID has
// accrued and not yet paid.
type StreamClaim struct {
	ID terms.Hash32 `cbor:"1,keyasint"`
}

func (p *StreamClaim) validate() error { return nonZeroID(p.ID) }

// StreamStop closes stream ID, signed by its payer or settler: what
// accrued up to this block goes to the payee's operator and the rest back
// to the escrow of (payer, settler), in the same transaction.
type StreamStop struct {
	ID terms.Hash32 `cbor:"1,keyasint"`
}

func (p *StreamStop) validate() error { return nonZeroID(p.ID) }

func nonZeroID(id terms.Hash32) error {
	if id == (terms.Hash32{}) {
		return reject(CodeMalformed, "stream ID is zero")
	}
	return nil
}
