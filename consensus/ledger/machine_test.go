package ledger_test

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// machine is ledgertest's provider machine on the test chain, its
// receipts signed at genesis time, failing the test on any error.
type machine struct {
	*ledgertest.Machine
}

func newMachineOn(t testing.TB, backend hwkey.Backend, notBefore, notAfter time.Time) *machine {
	t.Helper()
	m := ledgertest.TestMachineOn(t, backend, notBefore, notAfter)
	m.Clock = ledgertest.At(genesisTime)
	return &machine{m}
}

// newMachine is a software-key machine whose session covers the test's
// genesis time.
func newMachine(t testing.TB) *machine {
	t.Helper()
	return newMachineOn(t, hwkey.BackendSoftware, genesisTime.Add(-time.Hour), genesisTime.Add(time.Hour))
}

func (m *machine) machineID() identity.MachineID { return m.MachineID() }

// unsigned returns the machine's registration payload without signatures.
func (m *machine) unsigned(t testing.TB, bond, unbondingSecs uint64) *ledger.ProviderRegister {
	t.Helper()
	reg, err := m.Unsigned(bond, unbondingSecs)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// register returns the machine's registration by op, signed by the
// machine's keys and its peer key.
func (m *machine) register(t testing.TB, op *ledger.Signer, bond, unbondingSecs uint64) *ledger.ProviderRegister {
	t.Helper()
	reg, err := m.Register(testChain, op.Account(), bond, unbondingSecs)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// signMachine sets reg's hardware and ML-DSA-65 signatures by m's keys
// for op on the test chain.
func (m *machine) signMachine(t testing.TB, reg *ledger.ProviderRegister, op terms.AccountID) {
	t.Helper()
	if err := m.SignMachine(testChain, reg, op); err != nil {
		t.Fatal(err)
	}
}

// signPeer sets reg's peer signature by key for op on the test chain.
func signPeer(t testing.TB, reg *ledger.ProviderRegister, key crypto.PrivKey, op terms.AccountID) {
	t.Helper()
	if err := ledgertest.SignPeer(testChain, reg, key, op); err != nil {
		t.Fatal(err)
	}
}

// paidReceipt is ledgertest's PaidReceipt for the call seeded by seed.
func (m *machine) paidReceipt(t testing.TB, seed string, payer, settler terms.AccountID, price uint64) ([]byte, terms.Hash32, terms.Hash32) {
	t.Helper()
	env, h, rd, err := m.PaidReceipt([]byte(seed), payer, settler, price)
	if err != nil {
		t.Fatal(err)
	}
	return env, h, rd
}

// requestOf is the request digest of the call a receipt envelope answers.
func requestOf(t testing.TB, env []byte) terms.Hash32 {
	t.Helper()
	_, r, err := receipt.Parse(env)
	if err != nil {
		t.Fatal(err)
	}
	return receipt.RequestDigest(r.Nonce, [32]byte(r.InputCommitment), r.ModelID)
}
