package node

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// sessionKeeper holds the node's current session key and certificate and
// renews them before they expire, so a long-running provider never signs
// with a certificate its peers would refuse.
type sessionKeeper struct {
	id    *identity.Identity
	peer  crypto.PrivKey
	ttl   time.Duration
	clock clock.Clock
	log   *slog.Logger

	mu   sync.Mutex
	sess *identity.Session
}

func newSessionKeeper(id *identity.Identity, p crypto.PrivKey, ttl time.Duration, clk clock.Clock, log *slog.Logger) *sessionKeeper {
	return &sessionKeeper{id: id, peer: p, ttl: ttl, clock: clk, log: log}
}

// current returns a session valid for at least a quarter of its lifetime.
func (s *sessionKeeper) current() (*identity.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if s.sess != nil && s.sess.NotAfter().Sub(now) > s.ttl/4 {
		return s.sess, nil
	}
	// Back-date a little so peers with slightly slow clocks accept it.
	sess, err := s.id.IssueSession(s.peer, now.Add(-time.Minute), now.Add(s.ttl))
	if err != nil {
		return nil, fmt.Errorf("node: issue session certificate: %w", err)
	}
	s.sess = sess
	s.log.Info("session certificate issued", "machine", s.id.MachineID(), "not_after", sess.NotAfter().UTC())
	return sess, nil
}
