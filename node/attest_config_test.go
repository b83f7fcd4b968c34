package node

import (
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
)

// writeFile writes b into the node's home and returns its relative name.
func writeFile(t *testing.T, cfg Config, name string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cfg.Home, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// testRoots points [attest] at go-sev-guest's test-only chain.
func testRoots(t *testing.T, cfg *Config) {
	t.Helper()
	chain := writeFile(t, *cfg, "test_cert_chain.pem", attesttest.CertChainPEM(t))
	cfg.Attest.Roots = []attest.RootConfig{{ProductLine: attesttest.ProductLine(), CertChain: chain}}
}

func crlPEM(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}) }

// TestAttestConfigErrorsNameTheKey: every bad [attest] value is refused
// naming its key; the test chain with a CRL its ARK signed is accepted.
func TestAttestConfigErrorsNameTheKey(t *testing.T) {
	s := attesttest.Signer(t)
	good := testConfig(t, RoleGateway, "software", nil)
	testRoots(t, &good)
	good.Attest.CRLs = []string{writeFile(t, good, "amd.crl", crlPEM(attesttest.CRL(t, s.Ark, s.Keys.Ark, s.Vcek.SerialNumber).Raw))}
	good.Attest.MinTCB = attest.TCBConfig{BlSpl: 3, SnpSpl: 8, UcodeSpl: 115}
	if err := good.Validate(); err != nil {
		t.Fatalf("test roots with a CRL: %v", err)
	}
	p, err := good.Attest.Policy(good.Path)
	if err != nil || len(p.Roots) != 1 || len(p.CRLs) != 1 || p.MinTCB != attesttest.GoodTCB || p.Cache == nil {
		t.Fatalf("policy %+v, %v", p, err)
	}
	ca, key := attesttest.ForeignCA(t)
	for key, mutate := range map[string]func(*Config){
		"attest.roots[0].product_line": func(c *Config) { c.Attest.Roots[0].ProductLine = "Rome" },
		"attest.roots[0].cert_chain":   func(c *Config) { c.Attest.Roots[0].CertChain = "missing.pem" },
		"attest.roots[0].vlek_cert_chain": func(c *Config) {
			c.Attest.Roots[0].VLEKCertChain = writeFile(t, *c, "bad_vlek.pem", []byte("not pem"))
		},
		"attest.crls[0]": func(c *Config) { c.Attest.CRLs = []string{writeFile(t, *c, "junk.crl", []byte("junk"))} },
		"attest.crls[1]": func(c *Config) {
			c.Attest.CRLs = append(c.Attest.CRLs, writeFile(t, *c, "foreign.crl", crlPEM(attesttest.CRL(t, ca, key, s.Vcek.SerialNumber).Raw)))
		},
		"attest.min_tcb.snp_spl":   func(c *Config) { c.Attest.MinTCB.SnpSpl = 128 },
		"attest.min_tcb.ucode_spl": func(c *Config) { c.Attest.MinTCB.UcodeSpl = -1 },
		"attest.tdx_roots[0]":      func(c *Config) { c.Attest.TDXRoots = []string{writeFile(t, *c, "intel.pem", []byte("none"))} },
		"attest.cache_size":        func(c *Config) { c.Attest.CacheSize = -1 },
	} {
		c := good
		c.Attest.Roots = append([]attest.RootConfig(nil), good.Attest.Roots...)
		c.Attest.CRLs = append([]string(nil), good.Attest.CRLs...)
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %v does not name the key", key, err)
		}
	}
	// With AMD's embedded roots, a CRL signed by the test ARK revokes
	// nothing those roots trust: a configuration error.
	c := testConfig(t, RoleGateway, "software", nil)
	c.Attest.CRLs = []string{writeFile(t, c, "test.crl", crlPEM(attesttest.CRL(t, s.Ark, s.Keys.Ark, s.Vcek.SerialNumber).Raw))}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "not signed by a trusted ARK") {
		t.Fatalf("CRL of another chain: %v", err)
	}
}

// TestAttestConfigRoundTrip: a config with every [attest] and
// [provider.attestation] key renders and loads back to the same values.
func TestAttestConfigRoundTrip(t *testing.T) {
	cfg := testConfig(t, RoleProvider, "software", nil)
	testRoots(t, &cfg)
	cfg.Attest.MinTCB = attest.TCBConfig{BlSpl: 1, TeeSpl: 2, SnpSpl: 3, UcodeSpl: 200}
	cfg.Attest.CacheSize = 77
	cfg.Provider.Attestation.Source = "file"
	cfg.Provider.Attestation.File = "attestation.bin"
	if err := WriteConfig(cfg, false); err != nil {
		t.Fatal(err)
	}
	got, err := Load(cfg.Home)
	if err != nil {
		t.Fatal(err)
	}
	if got.Attest.MinTCB != cfg.Attest.MinTCB || got.Attest.CacheSize != 77 || len(got.Attest.Roots) != 1 ||
		got.Attest.Roots[0] != cfg.Attest.Roots[0] || got.Provider.Attestation != cfg.Provider.Attestation {
		t.Fatalf("round trip: %+v / %+v", got.Attest, got.Provider.Attestation)
	}
}
