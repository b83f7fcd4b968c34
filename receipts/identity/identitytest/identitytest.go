package identitytest

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Machine is a machine identity with a session certified for its peer.
type Machine struct {
	ID      *identity.Identity
	Key     crypto.PrivKey // the libp2p peer key the session binds
	Peer    peer.ID
	Session *identity.Session
}

// MachineID is the machine's ID.
func (m *Machine) MachineID() identity.MachineID { return m.ID.MachineID() }

// NewMachine opens a machine identity (Open) and certifies a session for
// a fresh peer key (PeerKey), valid from notBefore to notAfter.
func NewMachine(t testing.TB, notBefore, notAfter time.Time) *Machine {
	t.Helper()
	id := Open(t)
	key, pid := PeerKey(t)
	return &Machine{ID: id, Key: key, Peer: pid, Session: Session(t, id, key, notBefore, notAfter)}
}

// Open opens a software-backed machine identity in a temporary directory,
// closed when the test ends.
func Open(t testing.TB) *identity.Identity {
	t.Helper()
	return OpenBackend(t, hwkey.BackendSoftware)
}

// OpenBackend is Open with the hardware-key backend b (the TPM simulator,
// say).
func OpenBackend(t testing.TB, b hwkey.Backend) *identity.Identity {
	t.Helper()
	id, err := identity.Open(hwkey.Config{Backend: b, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("identity.Open(%s): %v", b, err)
	}
	t.Cleanup(func() { _ = id.Close() })
	return id
}

// PeerKey returns a fresh Ed25519 libp2p key and its peer ID.
func PeerKey(t testing.TB) (crypto.PrivKey, peer.ID) {
	t.Helper()
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, pid
}

// Session certifies a session of id for the peer of key, valid from
// notBefore to notAfter.
func Session(t testing.TB, id *identity.Identity, key crypto.PrivKey, notBefore, notAfter time.Time) *identity.Session {
	t.Helper()
	sess, err := id.IssueSession(key, notBefore, notAfter)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// Seal signs payload with sess under domain and payloadType and returns
// the envelope's bytes as they travel, its certificate included.
func Seal(t testing.TB, sess *identity.Session, domain, payloadType string, payload []byte) []byte {
	t.Helper()
	env, err := sess.Seal(domain, payloadType, payload)
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
