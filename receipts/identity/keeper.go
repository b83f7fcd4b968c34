package identity

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/crypto"
)

// SessionKeeper holds a node's current session key and certificate and
// renews them before they expire, so a long-running node never signs with
// a certificate its peers would refuse.
type SessionKeeper struct {
	id    *Identity
	peer  crypto.PrivKey
	ttl   time.Duration
	clock clock.Clock
	log   *slog.Logger

	mu   sync.Mutex
	sess *Session
}

// NewSessionKeeper returns a keeper issuing sessions of lifetime ttl,
// certified by id and by the libp2p peer key p.
func NewSessionKeeper(id *Identity, p crypto.PrivKey, ttl time.Duration, clk clock.Clock, log *slog.Logger) *SessionKeeper {
	if clk == nil {
		clk = clock.New()
	}
	if log == nil {
		log = slog.Default()
	}
	return &SessionKeeper{id: id, peer: p, ttl: ttl, clock: clk, log: log}
}

// Current returns a session valid for at least a quarter of its lifetime.
func (s *SessionKeeper) Current() (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if s.sess != nil && s.sess.NotAfter().Sub(now) > s.ttl/4 {
		return s.sess, nil
	}
	// Back-date a little so peers with slightly slow clocks accept it.
	sess, err := s.id.IssueSession(s.peer, now.Add(-time.Minute), now.Add(s.ttl))
	if err != nil {
		return nil, fmt.Errorf("identity: issue session certificate: %w", err)
	}
	s.sess = sess
	s.log.Info("session certificate issued", "machine", s.id.MachineID(), "not_after", sess.NotAfter().UTC())
	return sess, nil
}

// Identity is the machine identity certifying the sessions.
func (s *SessionKeeper) Identity() *Identity { return s.id }
