package ledger_test

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// machine is a provider machine with a real identity (a software or TPM
// simulator hardware key and an ML-DSA-65 key), its libp2p peer key and a
// certified session, so it can register and sign receipts.
type machine struct {
	id      *identity.Identity
	peerKey crypto.PrivKey
	peerID  peer.ID
	session *identity.Session
}

func newMachineOn(t testing.TB, backend hwkey.Backend, notBefore, notAfter time.Time) *machine {
	t.Helper()
	id, err := identity.Open(hwkey.Config{Backend: backend, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = id.Close() })
	pk, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := peer.IDFromPrivateKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	s, err := id.IssueSession(pk, notBefore, notAfter)
	if err != nil {
		t.Fatal(err)
	}
	return &machine{id: id, peerKey: pk, peerID: pid, session: s}
}

// newMachine is a software-key machine whose session covers the test's
// genesis time.
func newMachine(t testing.TB) *machine {
	t.Helper()
	return newMachineOn(t, hwkey.BackendSoftware, genesisTime.Add(-time.Hour), genesisTime.Add(time.Hour))
}

func (m *machine) machineID() identity.MachineID { return m.id.MachineID() }

func (m *machine) hwDER(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(m.id.HWPublicKey())
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// unsigned returns the machine's registration payload without signatures.
func (m *machine) unsigned(t testing.TB, bond, unbondingSecs uint64) *ledger.ProviderRegister {
	t.Helper()
	return &ledger.ProviderRegister{
		MachineID: m.machineID(), HWPubDER: m.hwDER(t), PQPub: m.id.PQPublicKey().Bytes(),
		PeerID: m.peerID.String(), Bond: bond, UnbondingSecs: unbondingSecs,
	}
}

// register returns the machine's registration by op, signed by the
// machine's keys and its peer key.
func (m *machine) register(t testing.TB, op *ledger.Signer, bond, unbondingSecs uint64) *ledger.ProviderRegister {
	t.Helper()
	reg := m.unsigned(t, bond, unbondingSecs)
	m.signMachine(t, reg, op.Account())
	signPeer(t, reg, m.peerKey, op.Account())
	return reg
}

// signMachine sets reg's hardware and ML-DSA-65 signatures by m's keys
// for op on the test chain.
func (m *machine) signMachine(t testing.TB, reg *ledger.ProviderRegister, op terms.AccountID) {
	t.Helper()
	payload, err := reg.SigningPayload(testChain, op)
	if err != nil {
		t.Fatal(err)
	}
	if reg.HWSig, reg.PQSig, err = m.id.SignRegistration(payload); err != nil {
		t.Fatal(err)
	}
}

// signPeer sets reg's peer signature by key for op on the test chain.
func signPeer(t testing.TB, reg *ledger.ProviderRegister, key crypto.PrivKey, op terms.AccountID) {
	t.Helper()
	payload, err := reg.SigningPayload(testChain, op)
	if err != nil {
		t.Fatal(err)
	}
	if reg.PeerSig, err = identity.SignRegistrationPeer(key, payload); err != nil {
		t.Fatal(err)
	}
}

// receipt seals payload as a receipt envelope and returns it with its hash.
func (m *machine) receipt(t testing.TB, payload string) ([]byte, terms.Hash32) {
	t.Helper()
	env, err := m.session.Seal(ledger.ReceiptDomain, "tenzro.receipt.v1", []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b, sha256.Sum256(b)
}

// testModel is the catalog model of the receipts paidReceipt signs.
var testModel = sha256.Sum256([]byte("ledger test model"))

// paidReceipt signs a real receipt of the call seeded by seed (its nonce
// and input), served to payer under settler at price (the least a record
// may pay), and returns the envelope, its hash and the call's request
// digest: what a record for the call must carry.
func (m *machine) paidReceipt(t testing.TB, seed string, payer, settler terms.AccountID, price uint64) ([]byte, terms.Hash32, terms.Hash32) {
	t.Helper()
	h := sha256.Sum256([]byte("ledger test call " + seed))
	mid := m.machineID()
	r := &receipt.Receipt{ModelID: testModel[:], Engine: "embedded", MachineID: mid[:], ProviderPeer: []byte(m.peerID),
		Nonce: h[:16], InputCommitment: h[:], OutputHash: h[:], Units: terms.Units{OutputTokens: 3}, FinishReason: "stop",
		TimeMs: genesisTime.UnixMilli(), Payer: payer[:], Settler: settler[:], Price: price}
	env, err := receipt.Sign(m.session, r)
	if err != nil {
		t.Fatal(err)
	}
	return env, sha256.Sum256(env), requestOf(t, env)
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
