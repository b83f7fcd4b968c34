package ledger

import (
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// The chain decodes the payloads it takes in DecodeTx, and only ever signs
// a registration payload; these decoders of one payload serve the fuzz
// tests, which reach the same stateless checks directly.

// DecodeSettlement parses a settlement payload as carried in a
// transaction: canonical CBOR passing the stateless checks. Failures are
// *TxError with CodeMalformed or CodeTooLarge.
func DecodeSettlement(raw []byte) (*Settlement, error) {
	var s Settlement
	if err := cborx.UnmarshalCanonical(raw, MaxTxBytes, &s); err != nil {
		return nil, reject(CodeMalformed, "settlement: %v", err)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// DecodeRegistrationPayload parses the canonical CBOR of a payload and
// checks its fields (chain ID 1..64 bytes, peer ID that parses, non-zero
// machine ID); failures are CodeMalformed *TxError.
func DecodeRegistrationPayload(b []byte) (RegistrationPayload, error) {
	var r RegistrationPayload
	if err := cborx.UnmarshalCanonical(b, MaxRegistrationPayload, &r); err != nil {
		return r, reject(CodeMalformed, "registration payload: %v", err)
	}
	if n := len(r.ChainID); n == 0 || n > maxChainIDBytes {
		return r, reject(CodeMalformed, "registration payload: chain ID of %d bytes", n)
	}
	if r.MachineID.IsZero() {
		return r, reject(CodeMalformed, "registration payload: machine ID is zero")
	}
	if _, err := peer.Decode(r.PeerID); err != nil || len(r.PeerID) > maxPeerIDBytes {
		return r, reject(CodeMalformed, "registration payload: peer ID %q does not parse", r.PeerID)
	}
	return r, nil
}
