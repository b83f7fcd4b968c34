package ledger

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// PayAuthDomain starts the bytes a settler's pay authorization covers.
const PayAuthDomain = "tenzro/v1/pay-auth"

// ErrPayAuth is the failure of a settler's pay authorization.
var ErrPayAuth = errors.New("ledger: pay authorization does not verify")

// PayAuthSigningBytes returns PayAuthDomain ‖ 0x00 ‖ uvarint(len(chainID))
// ‖ chainID ‖ uvarint(len(caller)) ‖ caller ‖ payer. caller is the libp2p
// peer ID (its bytes) the settler's requests come from: binding it means a
// fresh peer ID cannot borrow a settler's credit, and one settler's credit
// is one credit however many peers it uses.
func PayAuthSigningBytes(chainID string, caller []byte, payer terms.AccountID) []byte {
	out := make([]byte, 0, len(PayAuthDomain)+1+20+len(chainID)+len(caller)+len(payer))
	out = append(out, PayAuthDomain...)
	out = append(out, 0)
	out = appendUvarint(out, uint64(len(chainID)))
	out = append(out, chainID...)
	out = appendUvarint(out, uint64(len(caller)))
	out = append(out, caller...)
	return append(out, payer[:]...)
}

// SignPayAuth is the settler's (priv's) signature authorizing caller to
// request calls it will pay from payer's escrow with that settler.
func SignPayAuth(priv ed25519.PrivateKey, chainID string, caller []byte, payer terms.AccountID) []byte {
	return ed25519.Sign(priv, PayAuthSigningBytes(chainID, caller, payer))
}

// VerifyPayAuth checks sig, settler's authorization of caller for payer.
func VerifyPayAuth(chainID string, caller []byte, payer, settler terms.AccountID, sig []byte) error {
	if len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is %d bytes, want %d", ErrPayAuth, len(sig), ed25519.SignatureSize)
	}
	if !ed25519.Verify(ed25519.PublicKey(settler[:]), PayAuthSigningBytes(chainID, caller, payer), sig) {
		return fmt.Errorf("%w: by settler %s for payer %s", ErrPayAuth, settler, payer)
	}
	return nil
}
