package p2p

import (
	"errors"
	"fmt"
	"time"
)

// Limits bound the exchanges of a StreamServer. Every request/answer
// server (payment, session-cache, expert) takes them in its config, with
// its own defaults, so that an operator reads and sets them alike.
type Limits struct {
	// MaxPerPeer caps one peer's exchanges in progress; a stream beyond it
	// is reset before it is read.
	MaxPerPeer int
	// MaxConcurrent caps the exchanges in progress of all peers.
	MaxConcurrent int
	// Timeout bounds one exchange, from the opening to the answer.
	Timeout time.Duration
}

// Validate refuses negative limits, and a per-peer cap above the total
// one, which would never bind.
func (l Limits) Validate() error {
	switch {
	case l.MaxPerPeer < 0:
		return fmt.Errorf("max_per_peer %d is negative", l.MaxPerPeer)
	case l.MaxConcurrent < 0:
		return fmt.Errorf("max_concurrent %d is negative", l.MaxConcurrent)
	case l.Timeout < 0:
		return fmt.Errorf("timeout %s is negative", l.Timeout)
	case l.MaxPerPeer > 0 && l.MaxConcurrent > 0 && l.MaxPerPeer > l.MaxConcurrent:
		return fmt.Errorf("max_per_peer %d exceeds max_concurrent %d", l.MaxPerPeer, l.MaxConcurrent)
	}
	return nil
}

// ValidateServer checks what the server of a protocol whose requests
// name their network needs: that network's name, and valid limits.
func ValidateServer(network string, l Limits) error {
	if network == "" {
		return errors.New("network is required")
	}
	return l.Validate()
}

// Or returns l with its zero fields taken from def. A MaxConcurrent
// taken from def is raised to MaxPerPeer, so a per-peer cap set alone
// above the default total is not undercut by it.
func (l Limits) Or(def Limits) Limits {
	if l.MaxPerPeer == 0 {
		l.MaxPerPeer = def.MaxPerPeer
	}
	if l.MaxConcurrent == 0 {
		l.MaxConcurrent = max(def.MaxConcurrent, l.MaxPerPeer)
	}
	if l.Timeout == 0 {
		l.Timeout = def.Timeout
	}
	return l
}

// PeerLimits returns the admission of these limits; noun names an
// exchange (plural) in its refusals.
func (l Limits) PeerLimits(noun string) *PeerLimits {
	return NewPeerLimits(l.MaxPerPeer, l.MaxConcurrent, noun)
}
