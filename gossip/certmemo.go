package gossip

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// certMemo remembers, per machine, the last session certificate that
// verified and what was parsed from it (session key, peer ID). Every
// heartbeat carries its sender's whole certificate (about 5.6 KB); a
// byte comparison with the remembered one replaces re-encoding and
// hashing it for the certificate cache, parsing its session key and its
// peer ID, on each of a 1,000-provider network's 500 heartbeats a second
// (docs/SCALE.md). Equal bytes are the same certificate, so nothing is
// trusted that was not verified.
type certMemo struct {
	mu    sync.Mutex
	certs *lru.Cache[identity.MachineID, *memoCert]
}

type memoCert struct {
	cert identity.Certificate // a private copy
	key  *ecdsa.PublicKey
	peer peer.ID
}

func newCertMemo(size int) *certMemo {
	c, err := lru.New[identity.MachineID, *memoCert](size)
	if err != nil {
		panic(fmt.Sprintf("gossip: cert memo size %d: %v", size, err))
	}
	return &certMemo{certs: c}
}

// lookup returns what was remembered of c when c is byte for byte the
// certificate remembered for its machine. A nil memo remembers nothing
// (the benchmarks' before case).
func (m *certMemo) lookup(c *identity.Certificate) (*memoCert, bool) {
	if m == nil {
		return nil, false
	}
	var id identity.MachineID
	copy(id[:], c.MachineID)
	m.mu.Lock()
	mc, ok := m.certs.Get(id)
	m.mu.Unlock()
	if !ok || !sameCert(&mc.cert, c) {
		return nil, false
	}
	return mc, true
}

func (m *certMemo) remember(c *identity.Certificate, key *ecdsa.PublicKey, p peer.ID) {
	if m == nil {
		return
	}
	var id identity.MachineID
	copy(id[:], c.MachineID)
	m.mu.Lock()
	m.certs.Add(id, &memoCert{cert: c.Clone(), key: key, peer: p})
	m.mu.Unlock()
}

func sameCert(a, b *identity.Certificate) bool {
	return a.Version == b.Version && a.Backend == b.Backend && a.NotBefore == b.NotBefore && a.NotAfter == b.NotAfter &&
		bytes.Equal(a.MachineID, b.MachineID) && bytes.Equal(a.SessionPub, b.SessionPub) && bytes.Equal(a.PeerID, b.PeerID) &&
		bytes.Equal(a.HWSig, b.HWSig) && bytes.Equal(a.PeerSig, b.PeerSig) && bytes.Equal(a.HWPub, b.HWPub) &&
		bytes.Equal(a.PQPub, b.PQPub) && bytes.Equal(a.PQSig, b.PQSig)
}

// validity checks a remembered certificate's window on this node's clock,
// as the certificate cache does on every use.
func validity(c *identity.Certificate, now time.Time) *Result {
	nowMS, skew := now.UnixMilli(), identity.ClockSkew.Milliseconds()
	switch {
	case nowMS < c.NotBefore-skew:
		r := ignore(ReasonCertExpired, fmt.Errorf("gossip: %w: valid from %s", identity.ErrCertNotYetValid, time.UnixMilli(c.NotBefore).UTC().Format(time.RFC3339)))
		return &r
	case nowMS > c.NotAfter+skew:
		r := ignore(ReasonCertExpired, fmt.Errorf("gossip: %w: at %s", identity.ErrCertExpired, time.UnixMilli(c.NotAfter).UTC().Format(time.RFC3339)))
		return &r
	}
	return nil
}

// verifyWith checks env's signature with the remembered session key.
func verifyWith(env *identity.Envelope, key *ecdsa.PublicKey) bool {
	digest := sha256.Sum256(identity.SigningBytes(env.Domain, env.PayloadType, env.Payload))
	return ecdsa.VerifyASN1(key, digest[:], env.Sig)
}
