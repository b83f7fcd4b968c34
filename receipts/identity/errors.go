package identity

import "errors"

// Sentinel errors. Every verification failure wraps exactly one of them.
var (
	// ErrMalformedCert: a certificate field is missing, has the wrong size
	// or does not parse.
	ErrMalformedCert = errors.New("identity: malformed certificate")
	// ErrUnsupportedVersion: the certificate version is not CertVersion.
	ErrUnsupportedVersion = errors.New("identity: unsupported certificate version")
	// ErrBadMachineID: the certificate's MachineID is not the hash of its
	// hardware and ML-DSA-65 public keys.
	ErrBadMachineID = errors.New("identity: certificate machine ID does not match its keys")
	// ErrMachineMismatch: the certificate belongs to another machine than
	// the pinned one.
	ErrMachineMismatch = errors.New("identity: certificate is for another machine")
	// ErrBadCertSignature: the hardware or ML-DSA-65 signature over the
	// certificate does not verify.
	ErrBadCertSignature = errors.New("identity: bad certificate signature")
	// ErrCertNotYetValid: now is before NotBefore minus ClockSkew.
	ErrCertNotYetValid = errors.New("identity: certificate not yet valid")
	// ErrCertExpired: now is after NotAfter plus ClockSkew.
	ErrCertExpired = errors.New("identity: certificate expired")

	// ErrMalformedEnvelope: an envelope does not decode, is not canonical,
	// or has an invalid field. Oversized inputs also wrap cborx.ErrTooLarge.
	ErrMalformedEnvelope = errors.New("identity: malformed envelope")
	// ErrDomainMismatch: the envelope's domain is not the expected one.
	ErrDomainMismatch = errors.New("identity: envelope domain mismatch")
	// ErrBadSignature: the session key's signature over the envelope does
	// not verify.
	ErrBadSignature = errors.New("identity: bad envelope signature")
)
