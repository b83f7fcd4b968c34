package p2p

import (
	"errors"
	"fmt"

	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Resource-manager services of the network's stream protocols. A stream
// handler attaches each stream to its service (network.Stream.Scope().
// SetService) before reading from it, so AddServiceLimits' per-peer limits
// bound what one peer can hold open.
const (
	ServiceInfer        = "tenzro.infer"
	ServicePayment      = "tenzro.payment"
	ServiceExpert       = "tenzro.expert"
	ServiceSessionCache = "tenzro.session-cache"
)

// Services lists every tenzro stream service.
var Services = []string{ServiceInfer, ServicePayment, ServiceExpert, ServiceSessionCache}

// Limits of each tenzro service: the whole service is sized like libp2p's
// default per-service limits, and one peer may hold at most
// servicePeerInbound of its inbound streams, so a flood of streams from one
// peer is refused by the resource manager before any handler reads it.
const servicePeerInbound = 64

// AddServiceLimits adds the limits of the tenzro services to cfg.
func AddServiceLimits(cfg *rcmgr.ScalingLimitConfig) {
	for _, svc := range Services {
		cfg.AddServiceLimit(svc,
			rcmgr.BaseLimit{StreamsInbound: 1024, StreamsOutbound: 4096, Streams: 4096, Memory: 256 << 20},
			rcmgr.BaseLimitIncrease{StreamsInbound: 256, StreamsOutbound: 1024, Streams: 1024, Memory: 64 << 20})
		cfg.AddServicePeerLimit(svc,
			rcmgr.BaseLimit{StreamsInbound: servicePeerInbound, StreamsOutbound: 512, Streams: 512 + servicePeerInbound, Memory: 32 << 20},
			rcmgr.BaseLimitIncrease{})
	}
}

// ErrWrongNetwork marks a stream request from a peer of another network.
var ErrWrongNetwork = errors.New("p2p: request from another network")

// CodeWrongNetwork is the error code a stream protocol answers a request of
// another network with.
const CodeWrongNetwork = terms.CodeWrongNetwork

// CheckNetwork is the first check of every stream protocol's server: the
// network named in the request frame must be this node's. Protocol IDs are
// the same on every network (DESIGN.md, Stream protocols), so without it a
// peer of another network that dialled this node could be served, as the
// topics and the DHT, which carry the network in their names, never would.
func CheckNetwork(local, requested string) error {
	if requested != local {
		return fmt.Errorf("%w: request for network %q, this node serves %q", ErrWrongNetwork, requested, local)
	}
	return nil
}
