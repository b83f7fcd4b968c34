package attest

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/google/go-sev-guest/kds"
	"github.com/google/go-sev-guest/verify/trust"
)

// Config is the [attest] section of a node's config file: what this node trusts when it
// verifies the TEE attestations providers announce (the evidence behind
// the `tee` level). Every role verifies them, so every role has it. The
// minimum TCB is node configuration, not a chain parameter: nodes with
// different minimums disagree only on whom they quote at `tee` (a report
// below this node's minimum is Ignore, never Reject, so no relay is
// penalised for another node's policy).
type Config struct {
	// Roots replace AMD's roots embedded in go-sev-guest; empty trusts
	// those (Milan, Genoa, Turin).
	Roots []RootConfig `toml:"roots" comment:"A trusted AMD product line (replaces the embedded roots): its KDS cert_chain (PEM, ASK then ARK) and optionally its VLEK chain."`
	// CRLs are files of CRLs (PEM "X509 CRL" blocks or DER) revoking ASKs,
	// ASVKs or endorsement keys; each must be signed by a trusted ARK.
	CRLs []string `toml:"crls" comment:"What announced TEE attestations (the evidence behind the tee level) are verified against. Certificates are never fetched: providers carry their chain, and the roots are AMD's embedded in go-sev-guest unless [[attest.roots]] replace them. CRL files (PEM \"X509 CRL\" blocks or DER, e.g. https://kdsintf.amd.com/vcek/v1/Milan/crl) must be signed by a trusted ARK; they are read at start."`
	// MinTCB is the minimum reported TCB: every component at least this.
	MinTCB TCBConfig `toml:"min_tcb" comment:"Minimum reported SEV-SNP TCB, per component (bootloader, TEE, SNP firmware 0..127, microcode 0..255). A report below it, or revoked, is set aside: the provider is still quoted at other levels, never at tee. This is this node's policy, not a chain parameter."`
	// TDXRoots are PEM files of Intel SGX root certificates for TDX
	// quotes; empty trusts the one embedded in go-tdx-guest.
	TDXRoots []string `toml:"tdx_roots" comment:"Intel SGX root certificates (PEM files) for TDX quotes; [] = go-tdx-guest's."`
	// CacheSize is how many verified attestations are remembered per
	// (attestation, session key) so re-announcements skip the chain
	// check; 0 verifies every announcement afresh.
	CacheSize int `toml:"cache_size" comment:"Verified attestations remembered per (attestation, session key), so a re-announcement skips the chain check; 0 = verify every announcement."`
	// TestRoot, TEST-ONLY, is a devnet's test attestation root (PEM file,
	// attest.TestRootPEM): this node then accepts the devnet's test
	// attestations (kind "test") and no vendor's. Empty on every real
	// node, which refuses every test attestation; it cannot be set with
	// roots, tdx_roots or crls.
	TestRoot string `toml:"test_root" comment:"TEST-ONLY (devnets): a test root file; set, only test attestations (proving nothing) are accepted. Empty on real nodes: they refuse every test one."`
}

// RootConfig is one trusted AMD product line.
type RootConfig struct {
	// ProductLine is Milan, Genoa or Turin.
	ProductLine string `toml:"product_line"`
	// CertChain is the line's VCEK chain in AMD KDS cert_chain form (PEM:
	// ASK then ARK), e.g. https://kdsintf.amd.com/vcek/v1/Milan/cert_chain.
	CertChain string `toml:"cert_chain"`
	// VLEKCertChain, optional, is the line's VLEK chain (ASVK then the
	// same ARK), https://kdsintf.amd.com/vlek/v1/Milan/cert_chain.
	VLEKCertChain string `toml:"vlek_cert_chain"`
}

// TCBConfig is an SEV-SNP TCB version by component (security patch
// levels): bootloader, TEE and SNP firmware 0..127, microcode 0..255.
type TCBConfig struct {
	BlSpl    int `toml:"bl_spl"`
	TeeSpl   int `toml:"tee_spl"`
	SnpSpl   int `toml:"snp_spl"`
	UcodeSpl int `toml:"ucode_spl"`
}

// DefaultConfig trusts AMD's embedded roots with no CRL and no
// minimum TCB.
func DefaultConfig() Config {
	return Config{CRLs: []string{}, TDXRoots: []string{}, CacheSize: 4096}
}

// productLines are the lines go-sev-guest knows.
var productLines = []string{"Milan", "Genoa", "Turin"}

// Policy loads the configured files into a verification policy; path
// resolves them against the node's home. Errors name the key.
func (a Config) Policy(path func(string) string) (*Policy, error) {
	var errs []error
	p := &Policy{}
	if a.TestRoot != "" {
		root, err := a.testRoot(path)
		if err != nil {
			return nil, err
		}
		p.TestRoot = root
	}
	for i, r := range a.Roots {
		root, err := r.load(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("attest.roots[%d].%w", i, err))
			continue
		}
		p.Roots = append(p.Roots, root)
	}
	tcb, err := a.MinTCB.parts()
	if err != nil {
		errs = append(errs, err)
	}
	p.MinTCB = tcb
	if len(errs) == 0 {
		arks := trustedARKs(p)
		for i, f := range a.CRLs {
			crls, err := loadCRLs(path(f), arks)
			if err != nil {
				errs = append(errs, fmt.Errorf("attest.crls[%d]: %s: %w", i, f, err))
			}
			p.CRLs = append(p.CRLs, crls...)
		}
	}
	for i, f := range a.TDXRoots {
		if p.TDXRoots == nil {
			p.TDXRoots = x509.NewCertPool()
		}
		raw, err := os.ReadFile(path(f))
		if err == nil && !p.TDXRoots.AppendCertsFromPEM(raw) {
			err = errors.New("no PEM certificate in it")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("attest.tdx_roots[%d]: %s: %w", i, f, err))
		}
	}
	if a.CacheSize < 0 || a.CacheSize > 1<<20 {
		errs = append(errs, fmt.Errorf("attest.cache_size: %d outside 0..1048576", a.CacheSize))
	} else if a.CacheSize > 0 {
		p.Cache = NewCache(a.CacheSize)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// testRoot reads the TEST-ONLY root, refusing it beside any real root: a
// node configured with real roots never accepts the test one.
func (a Config) testRoot(path func(string) string) (ed25519.PublicKey, error) {
	if len(a.Roots) > 0 || len(a.TDXRoots) > 0 || len(a.CRLs) > 0 {
		return nil, errors.New("attest.test_root: the TEST-ONLY root cannot be trusted beside real roots (attest.roots, tdx_roots, crls): a node with real roots never accepts test attestations")
	}
	raw, err := os.ReadFile(path(a.TestRoot))
	if err != nil {
		return nil, fmt.Errorf("attest.test_root: %w", err)
	}
	root, err := ParseTestRoot(raw)
	if err != nil {
		return nil, fmt.Errorf("attest.test_root: %s: %w", a.TestRoot, err)
	}
	return root, nil
}

// load reads one product line's chains; errors start with the key name.
func (r RootConfig) load(path func(string) string) (*trust.AMDRootCerts, error) {
	if !slices.Contains(productLines, r.ProductLine) {
		return nil, fmt.Errorf("product_line: %q is not one of %v", r.ProductLine, productLines)
	}
	if r.CertChain == "" {
		return nil, errors.New("cert_chain: required (the line's ASK and ARK, PEM)")
	}
	root := trust.AMDRootCertsProduct(r.ProductLine)
	root.ProductCerts = &trust.ProductCerts{}
	if err := root.ProductCerts.FromKDSCert(path(r.CertChain)); err != nil {
		return nil, fmt.Errorf("cert_chain: %s: %w", r.CertChain, err)
	}
	if c := root.ProductCerts; c.Ark == nil || c.Ask == nil {
		return nil, fmt.Errorf("cert_chain: %s: want an ASK then an ARK", r.CertChain)
	}
	if err := root.ProductCerts.Ask.CheckSignatureFrom(root.ProductCerts.Ark); err != nil {
		return nil, fmt.Errorf("cert_chain: %s: the ARK did not sign the ASK: %w", r.CertChain, err)
	}
	if r.VLEKCertChain != "" {
		var v trust.ProductCerts
		if err := v.FromKDSCert(path(r.VLEKCertChain)); err != nil {
			return nil, fmt.Errorf("vlek_cert_chain: %s: %w", r.VLEKCertChain, err)
		}
		if v.Asvk == nil || v.Ark == nil || !v.Ark.Equal(root.ProductCerts.Ark) {
			return nil, fmt.Errorf("vlek_cert_chain: %s: want an ASVK then the cert_chain's ARK", r.VLEKCertChain)
		}
		root.ProductCerts.Asvk = v.Asvk
	}
	return root, nil
}

func (t TCBConfig) parts() (kds.TCBParts, error) {
	var errs []error
	for _, f := range []struct {
		key string
		v   int
		max int
	}{{"bl_spl", t.BlSpl, 127}, {"tee_spl", t.TeeSpl, 127}, {"snp_spl", t.SnpSpl, 127}, {"ucode_spl", t.UcodeSpl, 255}} {
		if f.v < 0 || f.v > f.max {
			errs = append(errs, fmt.Errorf("attest.min_tcb.%s: %d outside 0..%d", f.key, f.v, f.max))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return kds.TCBParts{}, err
	}
	return kds.TCBParts{BlSpl: svn(t.BlSpl), TeeSpl: svn(t.TeeSpl), SnpSpl: svn(t.SnpSpl), UcodeSpl: svn(t.UcodeSpl)}, nil
}

// svn is a security version number checked above to be 0..255 at most.
func svn(v int) uint8 {
	return uint8(min(max(v, 0), math.MaxUint8))
}

// trustedARKs are the ARKs of p's roots (AMD's embedded ones by default).
func trustedARKs(p *Policy) []*x509.Certificate {
	roots := p.Roots
	if len(roots) == 0 {
		for _, line := range productLines {
			if r, err := trust.GetDefaultRootCerts(line); err == nil {
				roots = append(roots, r)
			}
		}
	}
	var out []*x509.Certificate
	for _, r := range roots {
		if r.ProductCerts != nil && r.ProductCerts.Ark != nil {
			out = append(out, r.ProductCerts.Ark)
		}
	}
	return out
}

// loadCRLs reads every CRL in file (PEM blocks, or one DER CRL) and
// refuses one no trusted ARK signed: attest.Verify would skip it, and a
// revocation list that silently revokes nothing is a configuration error.
func loadCRLs(file string, arks []*x509.Certificate) ([]*x509.RevocationList, error) {
	raw, err := os.ReadFile(file) //nolint:gosec // G304: the operator names this file in [attest]
	if err != nil {
		return nil, err
	}
	var ders [][]byte
	for rest := raw; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "X509 CRL" {
			return nil, fmt.Errorf("PEM block %q, want X509 CRL", b.Type)
		}
		ders = append(ders, b.Bytes)
	}
	if len(ders) == 0 {
		ders = [][]byte{raw}
	}
	var out []*x509.RevocationList
	for i, der := range ders {
		crl, err := x509.ParseRevocationList(der)
		if err != nil {
			return nil, fmt.Errorf("CRL %d: %w", i, err)
		}
		signed := slices.ContainsFunc(arks, func(ark *x509.Certificate) bool { return crl.CheckSignatureFrom(ark) == nil })
		if !signed {
			return nil, fmt.Errorf("CRL %d (issuer %q) is not signed by a trusted ARK", i, crl.Issuer.CommonName)
		}
		out = append(out, crl)
	}
	return out, nil
}
