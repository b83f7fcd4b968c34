package terms

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
)

// AccountID is a chain account: its Ed25519 public key. It lives here, not
// in the ledger, because gateways, providers and the wire protocols name
// payers and settlers without needing the state machine.
type AccountID [32]byte

// String returns the ID as 64 lowercase hex digits.
func (a AccountID) String() string { return hex.EncodeToString(a[:]) }

// ParseAccountID parses 64 hex digits.
func ParseAccountID(s string) (AccountID, error) {
	b, err := parse32("account", s)
	return AccountID(b), err
}

// MarshalText makes AccountID hex in JSON.
func (a AccountID) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses 64 hex digits.
func (a *AccountID) UnmarshalText(b []byte) error {
	v, err := ParseAccountID(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// AccountOf returns the account of an Ed25519 public key.
func AccountOf(pub ed25519.PublicKey) AccountID {
	var a AccountID
	copy(a[:], pub)
	return a
}

// Hash32 is a SHA-256 digest.
type Hash32 [32]byte

// String returns the digest as 64 lowercase hex digits.
func (h Hash32) String() string { return hex.EncodeToString(h[:]) }

// MarshalText makes Hash32 hex in JSON.
func (h Hash32) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText parses 64 hex digits.
func (h *Hash32) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// ParseHash parses 64 hex digits.
func ParseHash(s string) (Hash32, error) {
	b, err := parse32("digest", s)
	return Hash32(b), err
}

// parse32 parses 64 hex digits; what names the value in the error.
func parse32(what, s string) ([32]byte, error) {
	var v [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(v) {
		return v, fmt.Errorf("terms: %s %q: want %d hex bytes", what, s, len(v))
	}
	copy(v[:], b)
	return v, nil
}
