package identity

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// t0 is a fixed instant so validity checks do not depend on the wall clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	heartbeatDomain = "tenzro/v1/heartbeat"
	announceDomain  = "tenzro/v1/announce"
)

func newPeerKey(t testing.TB) crypto.PrivKey {
	t.Helper()
	priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

func peerOf(t testing.TB, k crypto.PrivKey) peer.ID {
	t.Helper()
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func openIdentity(t testing.TB, b hwkey.Backend, dir string) *Identity {
	t.Helper()
	id, err := Open(hwkey.Config{Backend: b, Dir: dir})
	if err != nil {
		t.Fatalf("Open(%s, %s): %v", b, dir, err)
	}
	t.Cleanup(func() { id.Close() })
	return id
}

func newSession(t testing.TB, id *Identity) *Session {
	t.Helper()
	s, err := id.IssueSession(newPeerKey(t), t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatalf("IssueSession: %v", err)
	}
	return s
}

func seal(t testing.TB, s *Session, domain string, payload []byte) *Envelope {
	t.Helper()
	e, err := s.Seal(domain, "tenzro.test", payload)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return e
}

func marshal(t testing.TB, e *Envelope) []byte {
	t.Helper()
	b, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var backends = []hwkey.Backend{hwkey.BackendTPMSim, hwkey.BackendSoftware}

// UnmarshalCertificate decodes a certificate from its canonical encoding,
// rejecting inputs over maxSize bytes. It does not verify the certificate.
// Nodes only receive certificates inside envelopes; the tests decode one
// alone to check its encoding is canonical and bounded.
func UnmarshalCertificate(b []byte, maxSize int) (*Certificate, error) {
	var c Certificate
	if err := cborx.UnmarshalCanonical(b, maxSize, &c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedCert, err)
	}
	return &c, nil
}
