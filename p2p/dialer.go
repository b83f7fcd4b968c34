package p2p

import (
	"context"
	"errors"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
	routedhost "github.com/libp2p/go-libp2p/p2p/host/routed"
)

// Dialer is the host for opening streams to a peer by ID: when the
// peerstore holds no address for it (a provider restarted, its old
// addresses expired, its heartbeats relayed by others), the addresses are
// looked up in the DHT instead of the dial failing with "no addresses".
func (h *Host) Dialer() host.Host { return routedhost.Wrap(h.host, findTwice{h.dht}) }

// findTwice looks a peer up a second time when the first lookup finds
// nothing. The DHT seeds a lookup from its routing table, which can still
// hold the target after the peerstore forgot its addresses; the lookup then
// queries the target first, fails to dial it, marks it unreachable and
// drops it, and ignores the addresses another peer answers with a moment
// later — though it keeps them in the peerstore. The second lookup starts
// from those addresses.
type findTwice struct{ r routedhost.Routing }

func (f findTwice) FindPeer(ctx context.Context, id peer.ID) (peer.AddrInfo, error) {
	pi, err := f.r.FindPeer(ctx, id)
	if errors.Is(err, routing.ErrNotFound) && ctx.Err() == nil {
		return f.r.FindPeer(ctx, id)
	}
	return pi, err
}
