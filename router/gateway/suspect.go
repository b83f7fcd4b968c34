package gateway

import (
	"errors"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// suspectedLast moves the providers the table suspects (their connection
// closed, see router.Table.Suspect) behind the others, keeping each
// group's order: a session's warm successor then goes first when its
// primary's connection is gone, and an ordinary request tries a provider
// that is probably dead only once the others have failed.
func (g *Gateway) suspectedLast(cands []strategy.Candidate) []strategy.Candidate {
	var live, suspect []strategy.Candidate
	for _, c := range cands {
		if g.table.Suspected(c.Peer) {
			suspect = append(suspect, c)
		} else {
			live = append(live, c)
		}
	}
	if len(suspect) == 0 {
		return cands
	}
	return append(live, suspect...)
}

// suspectIfGone makes a provider the call could not reach suspected at
// once, so the requests that follow go elsewhere first without waiting
// for its heartbeats to lapse; a heartbeat or a new connection clears it.
func (g *Gateway) suspectIfGone(p peer.ID, err error) {
	if errors.Is(err, infer.ErrUnreachable) {
		g.table.Suspect(p)
	}
}
