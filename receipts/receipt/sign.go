package receipt

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Sign validates r, checks that it names the session's own machine and
// peer, and returns the encoded envelope sealing it with the session key.
func Sign(sess *identity.Session, r *Receipt) ([]byte, error) {
	if sess == nil || r == nil {
		return nil, errors.New("receipt: sign: nil session or receipt")
	}
	if !bytes.Equal(r.MachineID, sess.Cert.MachineID) {
		return nil, fmt.Errorf("receipt: sign: %w: machine %x, session machine %x", ErrSignerMismatch, r.MachineID, sess.Cert.MachineID)
	}
	if !bytes.Equal(r.ProviderPeer, sess.Cert.PeerID) {
		return nil, fmt.Errorf("receipt: sign: %w: peer differs from the session's", ErrSignerMismatch)
	}
	payload, err := r.Marshal()
	if err != nil {
		return nil, fmt.Errorf("receipt: sign: %w", err)
	}
	env, err := sess.Seal(Domain, PayloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("receipt: sign: %w", err)
	}
	b, err := env.Marshal()
	if err != nil {
		return nil, fmt.Errorf("receipt: sign: %w", err)
	}
	return b, nil
}

// Verify decodes a receipt envelope and verifies it against pinned, the
// machine the provider's announcement or registration pins, at now. It
// checks the domain and payload type, the certificate chain up to pinned,
// the session signature, the receipt's encoding and that the receipt names
// its signer's machine and peer. Each failure wraps one of ErrMalformed,
// ErrWrongDomain, ErrNotPinned, ErrWrongMachine, ErrBadCertificate,
// ErrBadSignature and ErrSignerMismatch.
func Verify(envelope []byte, pinned identity.MachineID, now time.Time) (*Receipt, error) {
	return VerifyCached(nil, envelope, pinned, now)
}

// VerifyCached is Verify with certificate verification remembered in
// cache (nil verifies fully), for a gateway that checks many receipts of
// the same few sessions.
func VerifyCached(cache *identity.CertCache, envelope []byte, pinned identity.MachineID, now time.Time) (*Receipt, error) {
	if pinned.IsZero() {
		return nil, ErrNotPinned
	}
	env, err := identity.UnmarshalEnvelope(envelope, MaxEnvelopeSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if env.Domain != Domain || env.PayloadType != PayloadType {
		return nil, fmt.Errorf("%w: %w: domain %q, payload type %q", ErrWrongDomain, identity.ErrDomainMismatch, env.Domain, env.PayloadType)
	}
	if err := cache.Verify(&env.Cert, pinned, now); err != nil {
		if errors.Is(err, identity.ErrMachineMismatch) {
			return nil, fmt.Errorf("%w: %w", ErrWrongMachine, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrBadCertificate, err)
	}
	if err := env.VerifySignature(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	r, err := UnmarshalReceipt(env.Payload)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(r.MachineID, env.Cert.MachineID) {
		return nil, fmt.Errorf("%w: receipt machine %x, certificate machine %x", ErrSignerMismatch, r.MachineID, env.Cert.MachineID)
	}
	if !bytes.Equal(r.ProviderPeer, env.Cert.PeerID) {
		return nil, fmt.Errorf("%w: receipt peer differs from the certificate's", ErrSignerMismatch)
	}
	return r, nil
}
