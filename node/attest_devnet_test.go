package node

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// testAttestFiles writes a devnet's TEST-ONLY root into cfg's home, and
// with device set also a device that root certified, as `tenzrod devnet
// --tee` does; it returns the root and device file names.
func testAttestFiles(t *testing.T, cfg Config, root ed25519.PrivateKey, device bool) (string, string) {
	t.Helper()
	rootFile := writeFile(t, cfg, "test_attest_root.pem", attest.MarshalTestRoot(root.Public().(ed25519.PublicKey)))
	if !device {
		return rootFile, ""
	}
	return rootFile, writeFile(t, cfg, "test_attest_device.pem", attest.NewTestDevice(root, [32]byte{9}).MarshalFile())
}

// TestTEEOnDevnetWithTestDevice: on a devnet chain whose nodes trust its
// test root, a registered provider with the file-based test device is
// quoted at tee with attestation kind "test" and serves a tee call, billed
// the chain's surcharge_tee (tenzro_getParams). A node trusting AMD's
// embedded roots and one configured with vendor roots list the same
// provider but never take its attestation: no tee quote, and a tee call
// there finds no provider.
func TestTEEOnDevnetWithTestDevice(t *testing.T) {
	_, root, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	params := testChainParams(3600)
	params.SurchargeTEE = 777
	device := func(c *Config) {
		c.Attest.TestRoot, c.Provider.Attestation.File = testAttestFiles(t, *c, root, true)
		c.Provider.Attestation.Source = provider.AttestTest
		c.Provider.Models[0].Verification = []terms.Verification{terms.VerifyNone, terms.VerifyReceipt, terms.VerifyTEE}
	}
	net := newChainNetWith(t, 1, 1, 0, params, chainExtra{provOpts: []func(*Config){device}}, func(c *Config) {
		c.Attest.TestRoot, _ = testAttestFiles(t, *c, root, false)
		c.Router.ProbeInterval = 0
	})
	gw, prov := net.validators[0], net.registered[0]
	boot := gw.Host().Addrs()[:1]
	embedded := testConfig(t, RoleGateway, "software", boot)
	embedded.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
	vendor := testConfig(t, RoleGateway, "software", boot)
	testRoots(t, &vendor)
	gwEmbedded, gwVendor := startNode(t, embedded), startNode(t, vendor)

	id := prov.Host().ID()
	if a := prov.Provider().Attested(); a == nil || a.Kind != attest.KindTest {
		t.Fatalf("the provider's own test-root policy did not take its test device's attestation: %+v", a)
	}
	waitRegistered(t, gw, net.registered)
	for name, n := range map[string]*Node{"AMD-roots gateway": gwEmbedded, "vendor-roots gateway": gwVendor} {
		waitProviders(t, name, n, id)
	}
	lines := teeQuotes(t, gw)
	if len(lines) != 1 || lines[0].Provider != id.String() || lines[0].Attested == nil || lines[0].Attested.Kind != attest.KindTest ||
		lines[0].Attested.ProductLine != "TEST-ONLY" || lines[0].Surcharge != params.SurchargeTEE {
		t.Fatalf("tee quotes at the test-root gateway %+v: want the provider, attestation kind test, surcharge %d", lines, params.SurchargeTEE)
	}
	for name, n := range map[string]*Node{"AMD's embedded roots": gwEmbedded, "configured vendor roots": gwVendor} {
		if o, _ := offerOf(n, id); o.Attested != nil {
			t.Errorf("a node trusting %s took the test attestation: %+v", name, o.Attested)
		}
		if lines := teeQuotes(t, n); len(lines) != 0 {
			t.Errorf("a node trusting %s quoted the test device at tee: %+v", name, lines)
		}
	}

	res, err := gw.rpcCall("tenzro_getParams", "")
	if err != nil {
		t.Fatal(err)
	}
	want := res.(ledger.Params).SurchargeTEE
	code, body := askTEE(t, gw)
	var out struct {
		Tenzro struct {
			Provider struct {
				PeerID string `json:"peer_id"`
			} `json:"provider"`
			Receipt struct {
				Verified bool `json:"verified"`
			} `json:"receipt"`
			Payment *struct {
				Breakdown terms.Breakdown `json:"breakdown"`
				Signed    *struct {
					Price uint64 `json:"price"`
				} `json:"signed"`
			} `json:"payment"`
		} `json:"tenzro"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || code != http.StatusOK {
		t.Fatalf("tee call at the test-root gateway: %d %s (%v)", code, body, err)
	}
	if pay := out.Tenzro.Payment; out.Tenzro.Provider.PeerID != id.String() || !out.Tenzro.Receipt.Verified || pay == nil ||
		pay.Signed == nil || pay.Breakdown.Surcharge != want {
		t.Fatalf("tee call %s: want served by the test device's provider, verified, a signed record billing surcharge_tee %d", body, want)
	}
	if code, body := askTEE(t, gwEmbedded); code != http.StatusServiceUnavailable || !strings.Contains(body, "no_provider") {
		t.Fatalf("tee call at the AMD-roots gateway: %d %s, want 503 no_provider", code, body)
	}
}

// askTEE sends one chat request at tee through n as the test buyer.
func askTEE(t *testing.T, n *Node) (int, string) {
	t.Helper()
	body := `{"model":"tenzro-devnet","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"tenzro":{"verification":"tee"}}`
	return postChat(t, n, testToken, body)
}

// TestTestRootNeverBesideRealRoots: [attest] test_root with any real root
// configured is refused at load, naming the key; alone it loads a policy
// that trusts the test root only.
func TestTestRootNeverBesideRealRoots(t *testing.T) {
	_, root, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, RoleGateway, "software", nil)
	cfg.Attest.TestRoot, _ = testAttestFiles(t, cfg, root, false)
	p, err := cfg.Attest.Policy(cfg.Path)
	if err != nil || !p.TestRoot.Equal(root.Public()) {
		t.Fatalf("test_root alone: %v, %v", p, err)
	}
	mixed := cfg
	testRoots(t, &mixed)
	mixed.Attest.TestRoot = cfg.Attest.TestRoot
	if _, err := mixed.Attest.Policy(mixed.Path); err == nil || !strings.Contains(err.Error(), "attest.test_root") {
		t.Fatalf("test_root beside attest.roots: %v, want refused naming attest.test_root", err)
	}
	crl := cfg
	crl.Attest.CRLs = []string{"amd.crl"}
	if err := crl.Validate(); err == nil || !strings.Contains(err.Error(), "attest.test_root") {
		t.Fatalf("test_root beside crls: %v, want refused naming attest.test_root", err)
	}
	bad := cfg
	bad.Attest.TestRoot = writeFile(t, cfg, "not_a_root.pem", []byte("hello"))
	if _, err := bad.Attest.Policy(bad.Path); !errors.Is(err, attest.ErrTestFile) {
		t.Fatalf("a test_root file that is no root: %v", err)
	}
}
