package ledger_test

import (
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
)

// BenchmarkDecodeRegistration measures decoding a provider registration
// with its three signature checks (P-256, ML-DSA-65, Ed25519), the cost
// every validator pays per registration in CheckTx and again in the block.
func BenchmarkDecodeRegistration(b *testing.B) {
	op, _ := ledgertest.Signer(testChain, "operator", 0)
	raw, err := op.SignTx(0, newMachine(b).register(b, op, 1000, 60))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ledger.DecodeTx(testChain, raw); err != nil {
			b.Fatal(err)
		}
	}
}
