package devnet

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Names of the TEST-ONLY files --tee writes into each node's home.
const (
	teeRootFile   = "TEST-ONLY-attest-root.pem"
	teeDeviceFile = "TEST-ONLY-attest-device.pem"
)

// teePlan is the TEST-ONLY attestation of a devnet with --tee: a fresh
// test root every node trusts ([attest] test_root) and, at each serving
// provider, a file-based device that root certified, so the devnet model is
// quoted and served at `tee` without SEV-SNP or TDX hardware. The root's
// private key is never written: it certifies the devices and is dropped.
type teePlan struct{ root ed25519.PrivateKey }

func newTEEPlan(o Options) (*teePlan, error) {
	if !o.TEE {
		return nil, nil
	}
	_, root, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("devnet: test attestation root: %w", err)
	}
	return &teePlan{root: root}, nil
}

// apply makes cfg (its home already made) trust the test root; a serving
// provider also gets its own device and offers `tee` on every model.
func (p *teePlan) apply(cfg *node.Config, serving bool) error {
	if p == nil {
		return nil
	}
	if err := os.WriteFile(filepath.Join(cfg.Home, teeRootFile), attest.MarshalTestRoot(p.root.Public().(ed25519.PublicKey)), 0o644); err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	cfg.Attest.TestRoot = teeRootFile
	if !serving {
		return nil
	}
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return fmt.Errorf("devnet: test device: %w", err)
	}
	dev := attest.NewTestDevice(p.root, seed)
	if err := os.WriteFile(filepath.Join(cfg.Home, teeDeviceFile), dev.MarshalFile(), 0o600); err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	cfg.Provider.Attestation.Source, cfg.Provider.Attestation.File = provider.AttestTest, teeDeviceFile
	for i := range cfg.Provider.Models {
		if !slices.Contains(cfg.Provider.Models[i].Verification, terms.VerifyTEE) {
			cfg.Provider.Models[i].Verification = append(cfg.Provider.Models[i].Verification, terms.VerifyTEE)
		}
	}
	return nil
}

// printTEE says, where the devnet is announced, that its tee is a test.
func printTEE(w io.Writer, o Options, bin, gateway, model string) {
	if !o.TEE {
		return
	}
	fmt.Fprintf(w, "\n  TEST-ONLY tee (--tee): every node trusts a fresh test attestation root (%s), each provider\n", teeRootFile)
	fmt.Fprintf(w, "  announces a file-based test device (%s). Quotes show attestation kind \"test\"; it proves\n", teeDeviceFile)
	fmt.Fprintf(w, "  nothing about confidentiality, and a node with real roots (any node outside this devnet) refuses it.\n")
	fmt.Fprintf(w, "  %s shell --api %s -c \"quote --level tee %s\"\n", bin, gateway, model)
}
