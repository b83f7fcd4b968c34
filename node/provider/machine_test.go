package provider

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// testMachine is a machine identity on the software backend, closed when
// the test ends, and a fresh peer key for its sessions with its peer ID.
func testMachine(tb testing.TB) (*identity.Identity, crypto.PrivKey, peer.ID) {
	tb.Helper()
	id, err := identity.Open(hwkey.Config{Backend: hwkey.BackendSoftware, Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { id.Close() })
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	pid, err := peer.IDFromPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return id, key, pid
}

// testSession is a session of a fresh test machine, valid from an hour
// before now to an hour after, with the machine's ID and the session's
// peer.
func testSession(tb testing.TB) (identity.MachineID, *identity.Session, peer.ID) {
	tb.Helper()
	id, pk, pid := testMachine(tb)
	now := time.Now()
	sess, err := id.IssueSession(pk, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		tb.Fatal(err)
	}
	return id.MachineID(), sess, pid
}
