package p2p

import (
	"errors"
	"fmt"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
)

// ErrLimitsClosed is Admit's answer once the server has stopped.
var ErrLimitsClosed = errors.New("server stopped")

// PeerLimits bounds a stream protocol server's exchanges in progress, per
// peer and in all, and lets the server's Stop wait for the admitted ones:
// the part every small request/answer protocol (payment, session-cache)
// needs before it reads a byte.
type PeerLimits struct {
	maxPerPeer, maxTotal int
	noun                 string // "deliveries", "exchanges": for the errors

	mu      sync.Mutex
	perPeer map[peer.ID]int
	active  int
	closed  bool
	wg      sync.WaitGroup
}

// NewPeerLimits allows maxPerPeer exchanges of one peer and maxTotal in
// all; noun names an exchange (plural) in the refusals.
func NewPeerLimits(maxPerPeer, maxTotal int, noun string) *PeerLimits {
	return &PeerLimits{maxPerPeer: maxPerPeer, maxTotal: maxTotal, noun: noun, perPeer: map[peer.ID]int{}}
}

// Admit takes a slot for p; release gives it back (call it once). It
// fails once Close has been called, or when p or all peers are at their
// limit.
func (l *PeerLimits) Admit(p peer.ID) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, ErrLimitsClosed
	case l.perPeer[p] >= l.maxPerPeer:
		return nil, fmt.Errorf("peer has %d %s in progress, limit %d", l.perPeer[p], l.noun, l.maxPerPeer)
	case l.active >= l.maxTotal:
		return nil, fmt.Errorf("%d %s in progress, limit %d", l.active, l.noun, l.maxTotal)
	}
	l.perPeer[p]++
	l.active++
	l.wg.Add(1)
	return func() {
		l.mu.Lock()
		if l.perPeer[p]--; l.perPeer[p] == 0 {
			delete(l.perPeer, p)
		}
		l.active--
		l.mu.Unlock()
		l.wg.Done()
	}, nil
}

// Active is the number of exchanges in progress.
func (l *PeerLimits) Active() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.active
}

// Close refuses new exchanges; Wait then returns once every admitted one
// is released.
func (l *PeerLimits) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// Wait blocks until every admitted exchange is released.
func (l *PeerLimits) Wait() { l.wg.Wait() }
