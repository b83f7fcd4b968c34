// Package attesttest builds SEV-SNP attestations for tests of packages that
// verify them: go-sev-guest's test-only AMD chain (ARK → ASK → VCEK) signs
// real reports bound to a session key, and Policy trusts only that chain.
// It imports go-sev-guest's testing package, so only tests may import it.
package attesttest
