package terms

import (
	"fmt"
	"strings"
)

// Verification is the level of assurance a buyer asks for and a provider
// offers (DESIGN.md, Pricing and quotes and Verifiable answers).
type Verification string

// The verification levels, weakest first.
const (
	// VerifyNone: the answer is taken as given.
	VerifyNone Verification = "none"
	// VerifyReceipt: the provider signs a receipt chaining to its
	// registered machine.
	VerifyReceipt Verification = "receipt"
	// VerifyOptimistic: the receipt also commits to the top-k log-probs of
	// every decode step, so anyone with the weights can check the answer.
	VerifyOptimistic Verification = "optimistic"
	// VerifyTEE: served inside an attested trusted execution environment.
	VerifyTEE Verification = "tee"
)

// Levels lists every verification level, weakest first.
var Levels = []Verification{VerifyNone, VerifyReceipt, VerifyOptimistic, VerifyTEE}

// Valid reports whether v is one of Levels.
func (v Verification) Valid() bool {
	switch v {
	case VerifyNone, VerifyReceipt, VerifyOptimistic, VerifyTEE:
		return true
	}
	return false
}

// NeedsCommitments reports whether the level asks for logit commitments.
func (v Verification) NeedsCommitments() bool { return v == VerifyOptimistic }

// String returns the level's name.
func (v Verification) String() string { return string(v) }

// LevelNames is the levels as a human-readable list, for error messages.
func LevelNames() string {
	names := make([]string, len(Levels))
	for i, l := range Levels {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// ParseVerification reads a level name, case-insensitively; "" is none.
func ParseVerification(s string) (Verification, error) {
	v := Verification(strings.ToLower(strings.TrimSpace(s)))
	if v == "" {
		return VerifyNone, nil
	}
	if !v.Valid() {
		return "", fmt.Errorf("terms: unknown verification level %q (%s)", s, LevelNames())
	}
	return v, nil
}
