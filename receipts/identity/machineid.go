package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// MachineIDDomain is hashed before the public keys in a MachineID.
const MachineIDDomain = "tenzro/v1/machine-id"

// MachineID identifies a machine: SHA-256 over MachineIDDomain, the PKIX DER
// of its hardware P-256 key and its ML-DSA-65 public key.
type MachineID [32]byte

// ComputeMachineID derives the machine ID from the PKIX DER of the hardware
// key and the packed ML-DSA-65 public key.
func ComputeMachineID(hwPubDER, pqPub []byte) MachineID {
	h := sha256.New()
	h.Write([]byte(MachineIDDomain))
	h.Write(hwPubDER)
	h.Write(pqPub)
	var m MachineID
	h.Sum(m[:0])
	return m
}

// String returns the ID as 64 lowercase hex digits.
func (m MachineID) String() string { return hex.EncodeToString(m[:]) }

// IsZero reports whether m is the zero ID (meaning "not pinned").
func (m MachineID) IsZero() bool { return m == MachineID{} }

// ParseMachineID parses 64 hex digits.
func ParseMachineID(s string) (MachineID, error) {
	var m MachineID
	if len(s) != 2*len(m) {
		return MachineID{}, fmt.Errorf("identity: machine ID %q: want %d hex digits, got %d", s, 2*len(m), len(s))
	}
	if _, err := hex.Decode(m[:], []byte(s)); err != nil {
		return MachineID{}, fmt.Errorf("identity: machine ID %q: %w", s, err)
	}
	return m, nil
}

// MarshalText encodes m as hex (for JSON and TOML).
func (m MachineID) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses hex (for JSON and TOML).
func (m *MachineID) UnmarshalText(b []byte) error {
	v, err := ParseMachineID(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
