package gossip

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// ValidateFunc is the shape of every topic validator: the pubsub context,
// the peer that propagated the message and its bytes in, a verdict with its
// reason and, on Accept, the verified value out. It keeps no per-call state
// beyond the Validator's caches.
type ValidateFunc func(ctx context.Context, from peer.ID, data []byte) Result

// validateTimeout is the local deadline of one validation. It covers the
// consensus-state reads of price observations (registryTimeout) with room
// for the signature checks.
const validateTimeout = registryTimeout + time.Second

// guard runs fn as the service runs every topic validator (after Prysm's
// validator wrapper): under a local deadline derived from ctx, with a panic
// turned into Ignore/ReasonPanic and any verdict but Accept reached once the
// deadline or ctx ended turned into Ignore/ReasonTimeout. Neither is the
// sender's fault, so neither may cost the propagating peer its score.
func guard(ctx context.Context, from peer.ID, data []byte, fn ValidateFunc, timeout time.Duration) (res Result) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			res = ignore(ReasonPanic, fmt.Errorf("gossip: validator panicked: %v\n%s", p, debug.Stack()))
		}
	}()
	res = fn(ctx, from, data)
	if res.Verdict != Accept && ctx.Err() != nil {
		res = Result{Verdict: Ignore, Reason: ReasonTimeout, Message: res.Message,
			Err: fmt.Errorf("gossip: validation cut short (%w); verdict was %s/%s: %w", context.Cause(ctx), res.Verdict, res.Reason, res.Err)}
	}
	return res
}
