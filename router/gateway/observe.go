package gateway

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Call is what the gateway measured of one call to a provider, on its own
// clock: handed to Deps.OnCall after a call settles (Success: the receipt
// verified and the price was charged) or fails through the provider's fault
// (a refused receipt, a broken or failed stream). Attempts the router
// cancelled (lost hedges, deadlines) and the buyer's own errors are not
// calls of the provider and are not reported.
type Call struct {
	Peer    peer.ID
	Machine identity.MachineID
	ModelID [32]byte
	// Price is the micro-units charged; 0 when nothing was paid.
	Price uint64
	// Latency runs from sending the request to its final frame or failure.
	Latency time.Duration
	// InputTokens and OutputTokens are the billed units, capped at what
	// the wire carried; 0 on failure.
	InputTokens, OutputTokens uint64
	Success                   bool
	Probe                     bool
	Time                      time.Time
}

// report hands one call to the OnCall hook, if any.
func (g *Gateway) report(s *stream, ok bool, price, in, out uint64) {
	if g.onCall == nil {
		return
	}
	now := g.clock.Now()
	c := Call{Peer: s.choice.offer.Peer, Machine: s.choice.offer.Machine, Price: price,
		Latency: now.Sub(s.start), InputTokens: in, OutputTokens: out, Success: ok, Probe: s.probe, Time: now}
	copy(c.ModelID[:], s.req.ModelID)
	g.onCall(c)
}
