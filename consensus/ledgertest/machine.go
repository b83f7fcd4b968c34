package ledgertest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Machine is a provider machine with a real identity (a software or TPM
// simulator hardware key and an ML-DSA-65 key under a directory), its
// libp2p peer key and a certified session, so it can register and sign
// receipts the chain verifies.
type Machine struct {
	ID      *identity.Identity
	PeerKey crypto.PrivKey
	PeerID  peer.ID
	Session *identity.Session
	// Clock is the time the receipts sign: the wall clock, unless a test
	// driving a ledger at a fixed genesis sets one.
	Clock clock.Clock
}

// NewMachine opens (creating) a software-key identity in dir and
// certifies a session valid from notBefore to notAfter for a fresh libp2p
// peer key.
func NewMachine(dir string, notBefore, notAfter time.Time) (*Machine, error) {
	return NewMachineOn(hwkey.BackendSoftware, dir, notBefore, notAfter)
}

// NewMachineOn is NewMachine with the hardware key on backend.
func NewMachineOn(backend hwkey.Backend, dir string, notBefore, notAfter time.Time) (*Machine, error) {
	id, err := identity.Open(hwkey.Config{Backend: backend, Dir: dir})
	if err != nil {
		return nil, fmt.Errorf("ledgertest: machine identity: %w", err)
	}
	pk, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("ledgertest: peer key: %w", err), id.Close())
	}
	pid, err := peer.IDFromPrivateKey(pk)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("ledgertest: peer ID: %w", err), id.Close())
	}
	s, err := id.IssueSession(pk, notBefore, notAfter)
	if err != nil {
		return nil, errors.Join(err, id.Close())
	}
	return &Machine{ID: id, PeerKey: pk, PeerID: pid, Session: s, Clock: clock.New()}, nil
}

// TestMachine is a software-key machine in t's temporary directory,
// closed when t ends, its session valid from notBefore to notAfter.
func TestMachine(t testing.TB, notBefore, notAfter time.Time) *Machine {
	t.Helper()
	return TestMachineOn(t, hwkey.BackendSoftware, notBefore, notAfter)
}

// TestMachineOn is TestMachine with the hardware key on backend.
func TestMachineOn(t testing.TB, backend hwkey.Backend, notBefore, notAfter time.Time) *Machine {
	t.Helper()
	m, err := NewMachineOn(backend, t.TempDir(), notBefore, notAfter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// At is a clock stopped at t, for a Machine whose receipts must sign one
// time whenever the test runs.
func At(t time.Time) clock.Clock {
	c := clock.NewMock()
	c.Set(t)
	return c
}

// Close releases the identity.
func (m *Machine) Close() error { return m.ID.Close() }

// MachineID is the machine's ID.
func (m *Machine) MachineID() identity.MachineID { return m.ID.MachineID() }

// Unsigned is the machine's registration payload without signatures.
func (m *Machine) Unsigned(bond, unbondingSecs uint64) (*ledger.ProviderRegister, error) {
	der, err := x509.MarshalPKIXPublicKey(m.ID.HWPublicKey())
	if err != nil {
		return nil, fmt.Errorf("ledgertest: hardware key: %w", err)
	}
	return &ledger.ProviderRegister{
		MachineID: m.MachineID(), HWPubDER: der, PQPub: m.ID.PQPublicKey().Bytes(),
		PeerID: m.PeerID.String(), Bond: bond, UnbondingSecs: unbondingSecs,
	}, nil
}

// SignMachine sets reg's hardware and ML-DSA-65 signatures by m's keys
// for operator on chainID.
func (m *Machine) SignMachine(chainID string, reg *ledger.ProviderRegister, operator terms.AccountID) error {
	payload, err := reg.SigningPayload(chainID, operator)
	if err != nil {
		return fmt.Errorf("ledgertest: registration payload: %w", err)
	}
	reg.HWSig, reg.PQSig, err = m.ID.SignRegistration(payload)
	return err
}

// SignPeer sets reg's peer signature by key for operator on chainID.
func SignPeer(chainID string, reg *ledger.ProviderRegister, key crypto.PrivKey, operator terms.AccountID) error {
	payload, err := reg.SigningPayload(chainID, operator)
	if err != nil {
		return fmt.Errorf("ledgertest: registration payload: %w", err)
	}
	reg.PeerSig, err = identity.SignRegistrationPeer(key, payload)
	return err
}

// Register returns the registration payload for this machine submitted
// by operator on chainID, signed by the machine's keys and its peer key.
func (m *Machine) Register(chainID string, operator terms.AccountID, bond, unbondingSecs uint64) (*ledger.ProviderRegister, error) {
	reg, err := m.Unsigned(bond, unbondingSecs)
	if err != nil {
		return nil, err
	}
	if err := m.SignMachine(chainID, reg, operator); err != nil {
		return nil, err
	}
	if err := SignPeer(chainID, reg, m.PeerKey, operator); err != nil {
		return nil, err
	}
	return reg, nil
}

// Receipt seals payload as a receipt envelope (domain
// ledger.ReceiptDomain) and returns its bytes and their SHA-256, the
// record's ReceiptHash. The chain settles no record with it (the payload
// is no receipt naming a payer): PaidReceipt signs one that settles.
func (m *Machine) Receipt(payload []byte) ([]byte, terms.Hash32, error) {
	env, err := m.Session.Seal(ledger.ReceiptDomain, receipt.PayloadType, payload)
	if err != nil {
		return nil, terms.Hash32{}, fmt.Errorf("ledgertest: seal receipt: %w", err)
	}
	b, err := env.Marshal()
	if err != nil {
		return nil, terms.Hash32{}, fmt.Errorf("ledgertest: receipt envelope: %w", err)
	}
	return b, sha256.Sum256(b), nil
}

// Model is the catalog model of the calls PaidReceipt answers.
var Model = terms.Hash32(sha256.Sum256([]byte("testnet model")))

// PaidReceipt signs the receipt of a call (seed picks its nonce and
// input, so one seed is one call) served to payer under settler, the
// provider owed at least price, and returns the envelope, its hash (the
// record's ReceiptHash) and the call's request digest: a record settles
// only with that digest, that payer and settler and a price ≥ price.
func (m *Machine) PaidReceipt(seed []byte, payer, settler terms.AccountID, price uint64) ([]byte, terms.Hash32, terms.Hash32, error) {
	h := sha256.Sum256(append([]byte("testnet call "), seed...))
	mid := m.MachineID()
	r := &receipt.Receipt{ModelID: Model[:], Engine: "testnet", MachineID: mid[:], ProviderPeer: []byte(m.PeerID),
		Nonce: h[:receipt.NonceSize], InputCommitment: h[:], OutputHash: h[:], Units: terms.Units{OutputTokens: 1},
		FinishReason: "stop", TimeMs: m.Clock.Now().UnixMilli(), Payer: payer[:], Settler: settler[:], Price: price}
	env, err := receipt.Sign(m.Session, r)
	if err != nil {
		return nil, terms.Hash32{}, terms.Hash32{}, fmt.Errorf("ledgertest: sign receipt: %w", err)
	}
	return env, sha256.Sum256(env), receipt.RequestDigest(r.Nonce, h, Model[:]), nil
}
