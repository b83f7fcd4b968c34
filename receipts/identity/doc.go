// Package identity binds a machine's keys into one identity, certifies
// short-lived session keys with it, and signs and verifies the envelopes
// that carry every signed message.
//
// # Machine ID
//
// A machine holds a hardware P-256 key (package hwkey) and an ML-DSA-65
// key (seed in Dir, mode 0600). Its MachineID is
//
//	SHA-256("tenzro/v1/machine-id" || PKIX-DER(hardware key) || ML-DSA-65 public key)
//
// Both keys have fixed-size encodings, so the concatenation is unambiguous.
//
// # Session certificates
//
// IssueSession makes a fresh software P-256 session key and a Certificate
// binding it to the machine ID, a libp2p peer ID and a validity window. The
// certificate is signed twice over the same bytes,
//
//	tbs = "tenzro/v1/session-cert" || CBOR(certificate with HWSig and PQSig empty)
//
// by the hardware key (ECDSA over SHA-256(tbs)) and by the ML-DSA-65 key
// (over tbs, empty context). A verifier pins the machine ID registered for
// the machine and checks both signatures, so forging a session needs both
// keys.
//
// # Envelopes
//
// Every signed message travels in an Envelope: a domain naming the message
// kind (e.g. "tenzro/v1/heartbeat"), a payload type, the payload (itself
// deterministic CBOR), the session certificate and an ECDSA signature by
// the session key over SHA-256(SigningBytes(domain, payloadType, payload)).
// SigningBytes length-prefixes the domain and payload type, so a signature
// over one kind of message never verifies as another.
//
// Registering on chain needs the machine's consent: SignRegistration signs
// the chain's registration payload with the hardware and ML-DSA-65 keys,
// SignRegistrationPeer with the libp2p peer key, all over
// RegistrationMessage (RegistrationDomain ‖ 0x00 ‖ payload), which no
// certificate (CBOR, starting with a map header) can ever equal; the
// VerifyRegistration* functions check them.
//
// Certificates and envelopes are CBOR maps with small integer keys in Core
// Deterministic Encoding (package cborx). Decoders accept only that
// canonical encoding, so every accepted value has exactly one byte form.
//
// Verification failures wrap distinct sentinel errors (ErrMalformedCert,
// ErrBadMachineID, ErrMachineMismatch, ErrCertExpired, ...) so callers can
// count rejection reasons with errors.Is.
package identity
