// Package attest verifies the TEE attestation a provider may carry in its
// announcement, the evidence behind the `tee` verification level.
//
// An Attestation is an AMD SEV-SNP attestation report plus the certificate
// chain that signs it (VCEK or VLEK → ASK or ASVK → ARK). It is worth
// something only when its REPORT_DATA binds the provider's certified session
// key: the report then says "the key that signs this provider's receipts was
// created inside this measured guest". The binding is
//
//	REPORT_DATA = SHA-512("tenzro/attest/session-key/1" ‖ 0x00 ‖ SessionPub)
//
// where SessionPub is the PKIX DER of the session P-256 key exactly as it
// appears in the session certificate (identity.Certificate.SessionPub).
// SHA-512 fills the 64-byte field, so nothing is padded; the domain string
// keeps a report made for another purpose from ever binding a session key.
//
// Verify refuses, each with its own sentinel error and Reason code: a
// malformed attestation, a report binding another key, a chain that does not
// lead to a trusted AMD root or a report signature that does not verify, a
// revoked intermediate or endorsement key (by a configured CRL), a debug
// guest (the host can read its memory), and stale evidence: the bound
// session certificate has expired, or the reported TCB is below the governed
// minimum. Certificates are never fetched from the network: the chain must be
// carried, and the roots are configured (AMD's embedded roots by default, the
// go-sev-guest test-only root in tests).
//
// An Intel TDX attestation (KindTDX) is a v4 quote alone: go-tdx-guest
// verifies its PCK chain to Intel's embedded root and its signatures, then
// the same binding (the quote's REPORT_DATA), session expiry and debug
// checks apply. Intel's TCB-info and QE-identity collateral are not fetched,
// so the minimum TCB and the CRLs apply to SEV-SNP only; the tests verify
// TDX against go-tdx-guest's recorded production quote.
//
// KindTest is TEST-ONLY, for trying `tee` on a devnet without hardware: a
// file-based device key (TestDevice, PEM "TENZRO TEST-ONLY ATTESTATION
// DEVICE") certified by a test root (PEM "... ROOT") signs the same
// REPORT_DATA binding. Only a Policy whose TestRoot is that root accepts
// it, and such a policy accepts nothing else; every other policy refuses it
// with ErrTestRoot (also an ErrChain, so gossip only sets it aside). Its
// Result says kind "test", product line "TEST-ONLY".
package attest
