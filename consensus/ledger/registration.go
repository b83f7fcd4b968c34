package ledger

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Registration signature and field limits.
const (
	maxChainIDBytes = 64
	maxPeerIDBytes  = 128
	maxHWSigBytes   = 80 // a DER P-256 ECDSA signature is at most 72 bytes
	maxPeerSigBytes = 256
	// MaxRegistrationPayload bounds an encoded RegistrationPayload.
	MaxRegistrationPayload = 512
)

// RegistrationPayload is what a registration's three signatures cover
// (inside identity.RegistrationMessage): the chain, the operator account
// that signs the transaction, the machine and the peer. Binding the
// operator means a signature lifted from one operator's registration is
// worthless to anyone else; binding the chain stops replays on another.
type RegistrationPayload struct {
	ChainID   string             `cbor:"1,keyasint"`
	Operator  terms.AccountID    `cbor:"2,keyasint"`
	MachineID identity.MachineID `cbor:"3,keyasint"`
	PeerID    string             `cbor:"4,keyasint"`
}

// Marshal returns the payload's canonical CBOR.
func (r RegistrationPayload) Marshal() ([]byte, error) { return cborx.Marshal(r) }

// SigningPayload is the encoded RegistrationPayload of p when operator
// submits it on chainID: what HWSig, PQSig and PeerSig must sign.
func (p *ProviderRegister) SigningPayload(chainID string, operator terms.AccountID) ([]byte, error) {
	return RegistrationPayload{ChainID: chainID, Operator: operator, MachineID: p.MachineID, PeerID: p.PeerID}.Marshal()
}

// checkRegistration verifies that a registration's keys parse and hash to
// its machine ID, that its peer ID parses and that its signatures have
// plausible sizes.
func checkRegistration(p *ProviderRegister) error {
	if p.MachineID.IsZero() {
		return reject(CodeMalformed, "machine ID is zero")
	}
	pub, err := x509.ParsePKIXPublicKey(p.HWPubDER)
	if err != nil {
		return reject(CodeBadIdentity, "hardware key: %v", err)
	}
	ec, ok := pub.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return reject(CodeBadIdentity, "hardware key is %T, want a P-256 ECDSA key", pub)
	}
	var pq mldsa65.PublicKey
	if err := pq.UnmarshalBinary(p.PQPub); err != nil {
		return reject(CodeBadIdentity, "ML-DSA-65 key: %v", err)
	}
	if got := identity.ComputeMachineID(p.HWPubDER, p.PQPub); got != p.MachineID {
		return reject(CodeBadIdentity, "machine ID %s does not match its keys (%s)", p.MachineID, got)
	}
	if _, err := peer.Decode(p.PeerID); err != nil || len(p.PeerID) > maxPeerIDBytes {
		return reject(CodeBadIdentity, "peer ID %q does not parse", p.PeerID)
	}
	switch {
	case len(p.HWSig) == 0 || len(p.HWSig) > maxHWSigBytes:
		return reject(CodeMalformed, "hardware signature is %d bytes", len(p.HWSig))
	case len(p.PQSig) != mldsa65.SignatureSize:
		return reject(CodeMalformed, "ML-DSA-65 signature is %d bytes, want %d", len(p.PQSig), mldsa65.SignatureSize)
	case len(p.PeerSig) == 0 || len(p.PeerSig) > maxPeerSigBytes:
		return reject(CodeMalformed, "peer signature is %d bytes", len(p.PeerSig))
	}
	if p.UnbondingSecs > 365*86400 {
		return reject(CodeMalformed, "unbonding delay %d s over one year", p.UnbondingSecs)
	}
	return nonZero("serving bond", p.Bond)
}

// checkRegistrationSigs verifies the three signatures over the payload of
// signer registering p on chainID. It runs after checkRegistration, so the
// keys and the peer ID parse.
func checkRegistrationSigs(p *ProviderRegister, chainID string, signer terms.AccountID) error {
	payload, err := p.SigningPayload(chainID, signer)
	if err != nil {
		return reject(CodeMalformed, "registration payload: %v", err)
	}
	if err := identity.VerifyRegistrationHW(p.HWPubDER, payload, p.HWSig); err != nil {
		return reject(CodeBadHWSig, "machine %s for operator %s: %v", p.MachineID, signer, err)
	}
	if err := identity.VerifyRegistrationPQ(p.PQPub, payload, p.PQSig); err != nil {
		return reject(CodeBadPQSig, "machine %s for operator %s: %v", p.MachineID, signer, err)
	}
	id, _ := peer.Decode(p.PeerID)
	if err := identity.VerifyRegistrationPeer(id, payload, p.PeerSig); err != nil {
		return reject(CodeBadPeerSig, "peer %s for operator %s: %v", p.PeerID, signer, err)
	}
	return nil
}
