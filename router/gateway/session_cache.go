package gateway

import (
	"context"
	"errors"
	"strings"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/sessioncache"
)

// cacheSuccessors is gateway.Successors over /tenzro/session-cache/1.0.0
// from this node's host (the assignment is signed by its libp2p key).
type cacheSuccessors struct{ h host.Host }

func (s cacheSuccessors) Assign(ctx context.Context, to peer.ID, a SessionAssignment) error {
	return sessioncache.Assign(ctx, s.h, to, sessioncache.Assignment(a))
}

func (s cacheSuccessors) Challenge(ctx context.Context, to peer.ID, sessionID string) (uint32, []byte, error) {
	return sessioncache.Challenge(ctx, s.h, to, sessionID)
}

// behind reports a successor's answer that its chain has not reached the
// stream's block yet: asked again until the assignment's bound, as long as
// it keeps answering so.
func behind(err error) bool {
	var r *sessioncache.RefusedError
	return errors.As(err, &r) && r.Code == sessioncache.CodeRetry && strings.Contains(r.Reason, sessioncache.ErrBehind.Error())
}

// CacheSuccessors is how a gateway on host h reaches standby successors.
func CacheSuccessors(h host.Host) Successors { return cacheSuccessors{h} }
