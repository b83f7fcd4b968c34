package identity

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

const (
	// MaxLabelLen bounds an envelope's domain and payload type.
	MaxLabelLen = 128
	// EnvelopeOverhead bounds the size of an envelope sealed by this
	// package beyond its payload: callers accepting payloads of up to n
	// bytes can pass n+EnvelopeOverhead to UnmarshalEnvelope.
	EnvelopeOverhead = MaxCertSize + 2*MaxLabelLen + 256
)

// Session is a certified session key. Cert is its certificate; the private
// key never leaves the Session. It is safe for concurrent use.
type Session struct {
	Cert Certificate
	priv *ecdsa.PrivateKey
}

// PublicKey returns the session's public key.
func (s *Session) PublicKey() *ecdsa.PublicKey { return &s.priv.PublicKey }

// MachineID returns the ID of the machine that certified the session.
func (s *Session) MachineID() MachineID {
	var m MachineID
	copy(m[:], s.Cert.MachineID)
	return m
}

// NotAfter returns the end of the certificate's validity window.
func (s *Session) NotAfter() time.Time { return time.UnixMilli(s.Cert.NotAfter) }

// Seal signs payload as a message of the given domain and payload type and
// returns the envelope, carrying a copy of the session certificate.
func (s *Session) Seal(domain, payloadType string, payload []byte) (*Envelope, error) {
	if err := checkLabel("domain", domain); err != nil {
		return nil, err
	}
	if err := checkLabel("payload type", payloadType); err != nil {
		return nil, err
	}
	digest := sha256.Sum256(SigningBytes(domain, payloadType, payload))
	sig, err := ecdsa.SignASN1(rand.Reader, s.priv, digest[:])
	if err != nil {
		return nil, fmt.Errorf("identity: seal: %w", err)
	}
	return &Envelope{
		Domain:      domain,
		PayloadType: payloadType,
		Payload:     append([]byte{}, payload...),
		Cert:        s.Cert.Clone(),
		Sig:         sig,
	}, nil
}

func checkLabel(what, s string) error {
	if s == "" || len(s) > MaxLabelLen || !utf8.ValidString(s) {
		return fmt.Errorf("identity: %s %q must be 1..%d bytes of UTF-8", what, s, MaxLabelLen)
	}
	return nil
}

// Envelope is a signed message: payload, its kind, the signer's session
// certificate and the session key's signature.
type Envelope struct {
	Domain      string      `cbor:"1,keyasint"` // message kind, e.g. "tenzro/v1/heartbeat"
	PayloadType string      `cbor:"2,keyasint"` // payload schema, e.g. "tenzro.heartbeat"
	Payload     []byte      `cbor:"3,keyasint"` // deterministic CBOR of the message
	Cert        Certificate `cbor:"4,keyasint"`
	Sig         []byte      `cbor:"5,keyasint"` // ECDSA (session key) over SHA-256(SigningBytes), DER
}

// SigningBytes returns the bytes an envelope signature covers:
// uvarint(len(domain)) || domain || uvarint(len(payloadType)) || payloadType
// || payload.
func SigningBytes(domain, payloadType string, payload []byte) []byte {
	b := make([]byte, 0, 2*binary.MaxVarintLen64+len(domain)+len(payloadType)+len(payload))
	b = binary.AppendUvarint(b, uint64(len(domain)))
	b = append(b, domain...)
	b = binary.AppendUvarint(b, uint64(len(payloadType)))
	b = append(b, payloadType...)
	return append(b, payload...)
}

// Marshal returns the envelope's deterministic CBOR encoding.
func (e *Envelope) Marshal() ([]byte, error) {
	b, err := cborx.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("identity: encode envelope: %w", err)
	}
	return b, nil
}

// UnmarshalEnvelope decodes an envelope, rejecting inputs over maxSize
// bytes (maxSize must be positive), trailing bytes, unknown or duplicate
// fields, and any encoding other than the canonical one. Allocation is
// bounded by len(b). It verifies nothing; see Verify.
func UnmarshalEnvelope(b []byte, maxSize int) (*Envelope, error) {
	var e Envelope
	if err := cborx.UnmarshalCanonical(b, maxSize, &e); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedEnvelope, err)
	}
	if err := checkLabel("domain", e.Domain); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedEnvelope, err)
	}
	if err := checkLabel("payload type", e.PayloadType); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedEnvelope, err)
	}
	return &e, nil
}

// VerifySignature checks Sig with the certificate's session key. It does
// not verify the certificate itself: callers verify it once (Verify or
// Cert.Verify) and may cache the result under Cert.Hash().
func (e *Envelope) VerifySignature() error {
	key, err := e.Cert.SessionKey()
	if err != nil {
		return err
	}
	digest := sha256.Sum256(SigningBytes(e.Domain, e.PayloadType, e.Payload))
	if !ecdsa.VerifyASN1(key, digest[:], e.Sig) {
		return ErrBadSignature
	}
	return nil
}

// Verify checks that the envelope is of wantDomain, that its certificate
// verifies against pinned at now (see Certificate.Verify), and its
// signature.
func (e *Envelope) Verify(wantDomain string, pinned MachineID, now time.Time) error {
	if e.Domain != wantDomain {
		return fmt.Errorf("%w: got %q, want %q", ErrDomainMismatch, e.Domain, wantDomain)
	}
	if err := e.Cert.Verify(pinned, now); err != nil {
		return err
	}
	return e.VerifySignature()
}
