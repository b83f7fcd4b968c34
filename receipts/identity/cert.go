package identity

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

const (
	// CertVersion is the only certificate version produced and accepted.
	CertVersion = 1
	// CertDomain prefixes the bytes both certificate signatures cover.
	CertDomain = "tenzro/v1/session-cert"
	// ClockSkew is the tolerance applied to both ends of a validity window.
	ClockSkew = 30 * time.Second
	// MaxCertSize bounds an encoded certificate (about 5.6 KB in practice).
	MaxCertSize = 8 << 10

	maxHWSigSize   = 72 // ASN.1 DER ECDSA P-256 signature
	maxPeerSigSize = 64 // Ed25519
)

// Certificate binds a session P-256 key to a machine and a libp2p peer for
// a validity window. It is signed by the machine's hardware key and its
// ML-DSA-65 key.
type Certificate struct {
	Version    uint8  `cbor:"1,keyasint"`
	Backend    string `cbor:"2,keyasint"`  // hwkey backend of the machine (a claim)
	HWPub      []byte `cbor:"3,keyasint"`  // PKIX DER of the hardware P-256 key
	PQPub      []byte `cbor:"4,keyasint"`  // packed ML-DSA-65 public key
	MachineID  []byte `cbor:"5,keyasint"`  // 32 bytes: ComputeMachineID(HWPub, PQPub)
	SessionPub []byte `cbor:"6,keyasint"`  // PKIX DER of the session P-256 key
	PeerID     []byte `cbor:"7,keyasint"`  // libp2p peer ID bytes
	NotBefore  int64  `cbor:"8,keyasint"`  // unix ms
	NotAfter   int64  `cbor:"9,keyasint"`  // unix ms
	HWSig      []byte `cbor:"10,keyasint"` // ECDSA (hardware key) over SHA-256(tbs), DER
	PQSig      []byte `cbor:"11,keyasint"` // ML-DSA-65 over tbs, empty context
	PeerSig    []byte `cbor:"12,keyasint"` // libp2p peer key over tbs: the peer consents to the binding
}

// Marshal returns the certificate's deterministic CBOR encoding.
func (c *Certificate) Marshal() ([]byte, error) {
	b, err := cborx.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("identity: encode certificate: %w", err)
	}
	return b, nil
}

// Hash returns SHA-256 of the certificate's deterministic encoding, a key
// for caching verification results. Encoding a Certificate cannot fail; if
// it ever did, Hash would return the hash of a fixed marker, which no
// verifiable certificate has.
func (c *Certificate) Hash() [32]byte {
	b, err := c.Marshal()
	if err != nil {
		return sha256.Sum256([]byte("tenzro/v1/unencodable-cert"))
	}
	return sha256.Sum256(b)
}

// Clone returns a deep copy of c.
func (c *Certificate) Clone() Certificate {
	d := *c
	for _, p := range []*[]byte{&d.HWPub, &d.PQPub, &d.MachineID, &d.SessionPub, &d.PeerID, &d.HWSig, &d.PQSig, &d.PeerSig} {
		*p = bytes.Clone(*p)
	}
	return d
}

// tbs returns the bytes all three signatures cover.
func (c *Certificate) tbs() ([]byte, error) {
	u := *c
	u.HWSig, u.PQSig, u.PeerSig = nil, nil, nil
	enc, err := u.Marshal()
	if err != nil {
		return nil, err
	}
	return append([]byte(CertDomain), enc...), nil
}

// Machine returns the certificate's machine ID field (not checked against
// the keys; Verify does that).
func (c *Certificate) Machine() (MachineID, error) {
	var m MachineID
	if len(c.MachineID) != len(m) {
		return MachineID{}, fmt.Errorf("%w: machine ID is %d bytes", ErrMalformedCert, len(c.MachineID))
	}
	copy(m[:], c.MachineID)
	return m, nil
}

// HardwareBacked reports whether the certificate claims a TPM backend
// ("tpm" or "tpm-sim"). The claim is the machine's own: it is not attested.
func (c *Certificate) HardwareBacked() bool {
	return hwkey.Backend(c.Backend).Hardware()
}

// Validity returns the certificate's validity window.
func (c *Certificate) Validity() (notBefore, notAfter time.Time) {
	return time.UnixMilli(c.NotBefore), time.UnixMilli(c.NotAfter)
}

// SessionKey parses the certified session public key.
func (c *Certificate) SessionKey() (*ecdsa.PublicKey, error) {
	k, err := parseP256(c.SessionPub)
	if err != nil {
		return nil, fmt.Errorf("%w: session key: %w", ErrMalformedCert, err)
	}
	return k, nil
}

// Peer parses the certified libp2p peer ID.
func (c *Certificate) Peer() (peer.ID, error) {
	id, err := peer.IDFromBytes(c.PeerID)
	if err != nil {
		return "", fmt.Errorf("%w: peer ID: %w", ErrMalformedCert, err)
	}
	return id, nil
}

// Verify checks the certificate: its version and field sizes, that
// MachineID is the hash of its keys, that it belongs to pinned (unless
// pinned is zero), that now lies in [NotBefore-ClockSkew,
// NotAfter+ClockSkew], and both signatures. Each failure wraps one of the
// package's sentinel errors.
func (c *Certificate) Verify(pinned MachineID, now time.Time) error {
	if c == nil {
		return fmt.Errorf("%w: nil", ErrMalformedCert)
	}
	if c.Version != CertVersion {
		return fmt.Errorf("%w: %d", ErrUnsupportedVersion, c.Version)
	}
	hwPub, pqPub, err := c.checkFields()
	if err != nil {
		return err
	}
	peerPub, err := c.peerKey()
	if err != nil {
		return err
	}
	if ComputeMachineID(c.HWPub, c.PQPub) != MachineID(c.MachineID) {
		return ErrBadMachineID
	}
	if !pinned.IsZero() && MachineID(c.MachineID) != pinned {
		return fmt.Errorf("%w: got %x, pinned %s", ErrMachineMismatch, c.MachineID, pinned)
	}
	// Skew is applied to now (a real clock), not to the certificate's
	// untrusted fields, so no comparison can overflow.
	nowMS, skew := now.UnixMilli(), ClockSkew.Milliseconds()
	if c.NotBefore > nowMS+skew {
		return fmt.Errorf("%w: valid from %s", ErrCertNotYetValid, time.UnixMilli(c.NotBefore).UTC().Format(time.RFC3339))
	}
	if c.NotAfter < nowMS-skew {
		return fmt.Errorf("%w: at %s", ErrCertExpired, time.UnixMilli(c.NotAfter).UTC().Format(time.RFC3339))
	}
	tbs, err := c.tbs()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformedCert, err)
	}
	digest := sha256.Sum256(tbs)
	if !ecdsa.VerifyASN1(hwPub, digest[:], c.HWSig) {
		return fmt.Errorf("%w: hardware key", ErrBadCertSignature)
	}
	if !mldsa65.Verify(pqPub, tbs, nil, c.PQSig) {
		return fmt.Errorf("%w: ml-dsa-65 key", ErrBadCertSignature)
	}
	if ok, err := peerPub.Verify(tbs, c.PeerSig); err != nil || !ok {
		return fmt.Errorf("%w: libp2p peer key", ErrBadCertSignature)
	}
	return nil
}

// checkFields validates sizes and encodings and parses the machine keys.
func (c *Certificate) checkFields() (*ecdsa.PublicKey, *mldsa65.PublicKey, error) {
	if b, err := hwkey.ParseBackend(c.Backend); err != nil || string(b) != c.Backend {
		return nil, nil, fmt.Errorf("%w: backend %q", ErrMalformedCert, c.Backend)
	}
	if len(c.MachineID) != len(MachineID{}) {
		return nil, nil, fmt.Errorf("%w: machine ID is %d bytes", ErrMalformedCert, len(c.MachineID))
	}
	if len(c.PQPub) != mldsa65.PublicKeySize {
		return nil, nil, fmt.Errorf("%w: ml-dsa-65 key is %d bytes", ErrMalformedCert, len(c.PQPub))
	}
	if len(c.PQSig) != mldsa65.SignatureSize {
		return nil, nil, fmt.Errorf("%w: ml-dsa-65 signature is %d bytes", ErrMalformedCert, len(c.PQSig))
	}
	if len(c.PeerSig) == 0 || len(c.PeerSig) > maxPeerSigSize {
		return nil, nil, fmt.Errorf("%w: peer signature is %d bytes", ErrMalformedCert, len(c.PeerSig))
	}
	if len(c.HWSig) == 0 || len(c.HWSig) > maxHWSigSize {
		return nil, nil, fmt.Errorf("%w: hardware signature is %d bytes", ErrMalformedCert, len(c.HWSig))
	}
	if c.NotAfter < c.NotBefore {
		return nil, nil, fmt.Errorf("%w: not-after precedes not-before", ErrMalformedCert)
	}
	if _, err := c.SessionKey(); err != nil {
		return nil, nil, err
	}
	if _, err := c.Peer(); err != nil {
		return nil, nil, err
	}
	hwPub, err := parseP256(c.HWPub)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: hardware key: %w", ErrMalformedCert, err)
	}
	var pqPub mldsa65.PublicKey
	if err := pqPub.UnmarshalBinary(c.PQPub); err != nil {
		return nil, nil, fmt.Errorf("%w: ml-dsa-65 key: %w", ErrMalformedCert, err)
	}
	return hwPub, &pqPub, nil
}

// peerKey extracts the public key embedded in the certified peer ID. Only
// peer IDs that embed their key (Ed25519, as tenzrod creates) can be bound,
// so a certificate can never name a peer that did not sign it.
func (c *Certificate) peerKey() (crypto.PubKey, error) {
	id, err := c.Peer()
	if err != nil {
		return nil, err
	}
	pub, err := id.ExtractPublicKey()
	if err != nil {
		return nil, fmt.Errorf("%w: peer ID does not embed its public key: %w", ErrMalformedCert, err)
	}
	return pub, nil
}

func parseP256(der []byte) (*ecdsa.PublicKey, error) {
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, err
	}
	ec, ok := k.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("not a P-256 key (%T)", k)
	}
	return ec, nil
}
