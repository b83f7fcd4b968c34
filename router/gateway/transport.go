package gateway

import (
	"context"
	"errors"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// Transport sends one request to a provider and streams its answer: the
// contract of infer.Call. The gateway's routing logic depends on nothing
// else of the network, so it runs alone over a scripted Transport in tests.
type Transport interface {
	Call(ctx context.Context, p peer.ID, req *infer.Request, cfg infer.ClientConfig, onToken func(*infer.TokenFrame) error) (*infer.FinalFrame, infer.WireStats, error)
}

// HostTransport calls providers over /tenzro/infer/1.0.0 from h.
func HostTransport(h host.Host) Transport { return hostTransport{h} }

type hostTransport struct{ h host.Host }

func (t hostTransport) Call(ctx context.Context, p peer.ID, req *infer.Request, cfg infer.ClientConfig, onToken func(*infer.TokenFrame) error) (*infer.FinalFrame, infer.WireStats, error) {
	return infer.Call(ctx, t.h, p, req, cfg, onToken)
}

// ErrStop is what the gateway's onToken returns when the buyer has left
// mid-stream: the transport stops the provider, waits briefly for its final
// frame (the receipt for what it generated) and returns it with an error
// wrapping ErrStop. It stands in for infer.ErrStop until p2p/infer defines
// it; the two become one sentinel then (ErrStop = infer.ErrStop), so a
// transport may return either today.
var ErrStop = errors.New("gateway: buyer left; stop the provider")

// isStop reports whether err says the call was stopped for a departed buyer.
func isStop(err error) bool { return errors.Is(err, ErrStop) }
