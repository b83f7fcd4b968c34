package identity

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// RegistrationDomain starts every message a registration signature covers,
// so a registration signature can never pass for a certificate, envelope
// or libp2p signature made with the same keys (and the reverse).
const RegistrationDomain = "tenzro/v1/registration"

// Registration signature failures.
var (
	// ErrBadRegistrationHW: the hardware key's signature does not verify.
	ErrBadRegistrationHW = errors.New("identity: bad registration signature by the hardware key")
	// ErrBadRegistrationPQ: the ML-DSA-65 signature does not verify.
	ErrBadRegistrationPQ = errors.New("identity: bad registration signature by the ml-dsa-65 key")
	// ErrBadRegistrationPeer: the libp2p peer key's signature does not
	// verify, or the peer ID does not embed its key.
	ErrBadRegistrationPeer = errors.New("identity: bad registration signature by the peer key")
)

// RegistrationMessage returns RegistrationDomain ‖ 0x00 ‖ payload, the
// bytes all three registration signatures cover. payload is the caller's
// (the chain's) canonical encoding of what is registered.
func RegistrationMessage(payload []byte) []byte {
	out := make([]byte, 0, len(RegistrationDomain)+1+len(payload))
	out = append(out, RegistrationDomain...)
	out = append(out, 0)
	return append(out, payload...)
}

// SignRegistration signs a registration payload with the hardware key
// (ECDSA over SHA-256 of RegistrationMessage, ASN.1 DER) and the ML-DSA-65
// key (over RegistrationMessage, no context), proving the machine consents.
func (id *Identity) SignRegistration(payload []byte) (hwSig, pqSig []byte, err error) {
	msg := RegistrationMessage(payload)
	digest := sha256.Sum256(msg)
	if hwSig, err = id.hw.Sign(digest[:]); err != nil {
		return nil, nil, fmt.Errorf("identity: sign registration: %w", err)
	}
	pqSig = make([]byte, mldsa65.SignatureSize)
	if err := mldsa65.SignTo(id.pq, msg, nil, true, pqSig); err != nil {
		return nil, nil, fmt.Errorf("identity: sign registration: ml-dsa-65: %w", err)
	}
	return hwSig, pqSig, nil
}

// SignRegistrationPeer signs a registration payload with a libp2p peer key
// (a node has it as host.Peerstore().PrivKey(host.ID())).
func SignRegistrationPeer(peerKey crypto.PrivKey, payload []byte) ([]byte, error) {
	if peerKey == nil {
		return nil, errors.New("identity: sign registration: no peer key")
	}
	sig, err := peerKey.Sign(RegistrationMessage(payload))
	if err != nil {
		return nil, fmt.Errorf("identity: sign registration: peer key: %w", err)
	}
	return sig, nil
}

// VerifyRegistrationHW checks the hardware key's signature; hwPubDER is
// the PKIX DER of a P-256 key.
func VerifyRegistrationHW(hwPubDER, payload, sig []byte) error {
	pub, err := parseP256(hwPubDER)
	if err != nil {
		return fmt.Errorf("%w: hardware key: %w", ErrBadRegistrationHW, err)
	}
	digest := sha256.Sum256(RegistrationMessage(payload))
	if !ecdsa.VerifyASN1(pub, digest[:], sig) {
		return ErrBadRegistrationHW
	}
	return nil
}

// VerifyRegistrationPQ checks the ML-DSA-65 signature; pqPub is the packed
// public key.
func VerifyRegistrationPQ(pqPub, payload, sig []byte) error {
	var pub mldsa65.PublicKey
	if err := pub.UnmarshalBinary(pqPub); err != nil {
		return fmt.Errorf("%w: ml-dsa-65 key: %w", ErrBadRegistrationPQ, err)
	}
	if !mldsa65.Verify(&pub, RegistrationMessage(payload), nil, sig) {
		return ErrBadRegistrationPQ
	}
	return nil
}

// VerifyRegistrationPeer checks the peer key's signature against the key
// embedded in id (tenzrod's Ed25519 peer IDs embed it), so the signature
// proves the signer holds the key of exactly that peer ID.
func VerifyRegistrationPeer(id peer.ID, payload, sig []byte) error {
	pub, err := id.ExtractPublicKey()
	if err != nil {
		return fmt.Errorf("%w: peer ID %s does not embed its key: %w", ErrBadRegistrationPeer, id, err)
	}
	if ok, err := pub.Verify(RegistrationMessage(payload), sig); err != nil || !ok {
		return ErrBadRegistrationPeer
	}
	return nil
}
