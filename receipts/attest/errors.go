package attest

import "errors"

// Sentinel errors. Every refusal from Verify or Unmarshal wraps exactly one
// of the specific ones; both stale cases also wrap ErrStale.
var (
	// ErrMalformed: the attestation does not decode, is not canonical, names
	// an unknown kind, or its report or certificates do not parse.
	ErrMalformed = errors.New("attest: malformed attestation")
	// ErrWrongKey: REPORT_DATA binds another key than the session key given.
	ErrWrongKey = errors.New("attest: report binds another session key")
	// ErrChain: the endorsement key certificate does not chain to a trusted
	// root, a carried ASK/ARK is not the trusted one, or the report
	// signature does not verify under the endorsement key.
	ErrChain = errors.New("attest: certificate chain or report signature refused")
	// ErrTestRoot: a TEST-ONLY attestation (KindTest) at a node that
	// trusts no test root; always returned with ErrChain.
	ErrTestRoot = errors.New("attest: TEST-ONLY attestation refused: this node trusts real roots, not the devnet test root")
	// ErrRevoked: a configured CRL revokes the intermediate or the
	// endorsement key certificate.
	ErrRevoked = errors.New("attest: certificate revoked")
	// ErrDebugGuest: the guest policy allows debugging, so the host can read
	// and change guest memory and the report proves nothing.
	ErrDebugGuest = errors.New("attest: debug guest")
	// ErrStale: the evidence is no longer current (see the two below).
	ErrStale = errors.New("attest: stale attestation")
	// ErrSessionExpired: the bound session certificate has expired.
	ErrSessionExpired = errors.New("attest: bound session certificate expired")
	// ErrLowTCB: the reported TCB is below the minimum in force.
	ErrLowTCB = errors.New("attest: reported TCB below minimum")
)

// reasons maps each specific sentinel to a short label for metrics and
// gossip reject reasons.
var reasons = []struct {
	err    error
	reason string
}{
	{ErrMalformed, "malformed"},
	{ErrWrongKey, "wrong_key"},
	{ErrTestRoot, "test_root"},
	{ErrChain, "chain"},
	{ErrRevoked, "revoked"},
	{ErrDebugGuest, "debug_guest"},
	{ErrSessionExpired, "session_expired"},
	{ErrLowTCB, "low_tcb"},
}

// Reason returns the refusal code of an error from this package ("" for nil,
// "other" for an error not from Verify or Unmarshal).
func Reason(err error) string {
	if err == nil {
		return ""
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "other"
}
