package gateway

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// A provider that accepts a call and then says nothing (killed with the
// connection not yet known dead: a QUIC peer that vanished sends no
// reset) was waited for first_token_timeout, 30 s, before the turn went
// to the warm successor. Once a provider has shown its time to first
// token, an attempt at it is abandoned at firstTokenFactor times its own
// p95, no sooner than firstTokenMin and no later than first_token_timeout.
// The factor leaves room for a longer prompt than the provider's usual
// (a session's growing history) without waiting out the whole-request
// bound; the floor keeps a fast provider from being abandoned over a
// scheduling hiccup. A first-token timeout feeds its wait back to the
// provider's p95, so a provider that is merely slower lengthens its own
// bound instead of failing every call.
const (
	firstTokenFactor = 4
	firstTokenMin    = 2 * time.Second
	// firstTokenSamples first tokens must be seen before the adaptive
	// bound applies: P²'s p95 is rough over fewer.
	firstTokenSamples = 20
)

// firstTokenTimeout is the first-token bound of an attempt at p; 0 when
// first_token_timeout is off.
func (g *Gateway) firstTokenTimeout(p peer.ID) time.Duration {
	if g.cfg.FirstTokenTimeout <= 0 {
		return 0
	}
	snap := g.latency.Snapshot(p)
	if snap.Count < firstTokenSamples {
		return g.cfg.FirstTokenTimeout
	}
	return min(max(firstTokenFactor*snap.P95, firstTokenMin), g.cfg.FirstTokenTimeout)
}
