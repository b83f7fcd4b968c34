package devnet

import (
	"crypto/ed25519"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestPlanTEE: with --tee every written config loads and trusts one test
// root, and each provider's device file attests its session keys under
// that root while the provider offers tee; without --tee no node trusts a
// test root, so the same device's attestation is refused everywhere.
func TestPlanTEE(t *testing.T) {
	o, plans, _ := testPlan(t, Options{Network: "teeplan", Validators: 1, Providers: 2, Gateways: 1, TEE: true})
	pub := []byte("a session key's PKIX DER")
	sess := attest.Session{Pub: pub, NotAfter: time.Now().Add(time.Hour)}
	var root ed25519.PublicKey
	var devices []*attest.TestDevice
	for _, p := range plans {
		cfg, err := node.Load(p.entry.Home)
		if err != nil {
			t.Fatalf("%s: %v", p.entry.Name, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", p.entry.Name, err)
		}
		pol, err := cfg.Attest.Policy(cfg.Path)
		if err != nil || pol.TestRoot == nil || root != nil && !pol.TestRoot.Equal(root) {
			t.Fatalf("%s: policy %+v, %v: want the devnet's one test root", p.entry.Name, pol, err)
		}
		root = pol.TestRoot
		if cfg.Role != node.RoleProvider {
			continue
		}
		if cfg.Provider.Attestation.Source != provider.AttestTest || !slices.Contains(cfg.Provider.Models[0].Verification, terms.VerifyTEE) {
			t.Fatalf("%s: attestation %+v, levels %v: want the test device and tee", p.entry.Name, cfg.Provider.Attestation, cfg.Provider.Models[0].Verification)
		}
		raw, err := os.ReadFile(cfg.Path(cfg.Provider.Attestation.File))
		if err != nil {
			t.Fatal(err)
		}
		dev, err := attest.ParseTestDevice(raw)
		if err != nil {
			t.Fatalf("%s: device: %v", p.entry.Name, err)
		}
		res, err := attest.Verify(dev.Attest(pub), sess, pol, time.Now())
		if err != nil || res.Kind != attest.KindTest {
			t.Fatalf("%s: its device under the devnet's root: %+v, %v", p.entry.Name, res, err)
		}
		devices = append(devices, dev)
	}
	if len(devices) != 2 {
		t.Fatalf("%d provider devices, want 2", len(devices))
	}

	o.TEE = false
	_, plans, _ = testPlan(t, o)
	for _, p := range plans {
		cfg, err := node.Load(p.entry.Home)
		if err != nil {
			t.Fatal(err)
		}
		pol, err := cfg.Attest.Policy(cfg.Path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := attest.Verify(devices[0].Attest(pub), sess, pol, time.Now()); !errors.Is(err, attest.ErrTestRoot) {
			t.Fatalf("%s without --tee took a test attestation: %v", p.entry.Name, err)
		}
	}
}
