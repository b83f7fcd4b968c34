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

// HostTransport calls providers over /tenzro/infer/1.0.0 from h, for
// network (the p2p network name every request carries; a provider of
// another network refuses it).
func HostTransport(h host.Host, network string) Transport {
	return hostTransport{h: h, network: network}
}

// WarmHostTransport is HostTransport taking each call's stream from warm
// when it holds one for the provider (infer.Warm): the gateway's calls
// then skip opening and negotiating the stream. The caller closes warm.
func WarmHostTransport(h host.Host, network string, warm *infer.Warm) Transport {
	return hostTransport{h: h, network: network, warm: warm}
}

type hostTransport struct {
	h       host.Host
	network string
	warm    *infer.Warm
}

func (t hostTransport) Call(ctx context.Context, p peer.ID, req *infer.Request, cfg infer.ClientConfig, onToken func(*infer.TokenFrame) error) (*infer.FinalFrame, infer.WireStats, error) {
	cfg.Network, cfg.Warm = t.network, t.warm
	return infer.Call(ctx, t.h, p, req, cfg, onToken)
}

// ErrStop is what the gateway's onToken returns when the buyer has left
// mid-stream: the transport stops the provider, waits up to
// ClientConfig.StopGrace for its final frame (the receipt for what was
// delivered) and returns it with an error wrapping ErrStop.
var ErrStop = infer.ErrStop

// isStop reports whether err says the call was stopped for a departed buyer.
func isStop(err error) bool { return errors.Is(err, ErrStop) }
