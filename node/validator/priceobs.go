package validator

import (
	"context"
	"crypto/ed25519"
	"sync/atomic"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// obsPublisher runs on validator nodes: it turns each call the gateway
// measured (buyers' calls and probes alike) into a price observation signed
// by the operator account HOME/account.key and gossips it. The account must
// be an active validator in consensus state for peers to admit it; calls to
// a provider the same account operates are not reported (peers would
// reject them).
type obsPublisher struct {
	v     *Validator
	key   ed25519.PrivateKey
	seq   atomic.Uint64
	queue chan gateway.Call

	loop
}

func newObsPublisher(v *Validator) *obsPublisher {
	p := &obsPublisher{v: v, key: v.d.AccountKey, queue: make(chan gateway.Call, 256)}
	// Sequence numbers start at the clock so a restart never reuses one.
	p.seq.Store(uint64(v.d.Clock.Now().UnixMicro()))
	return p
}

// onCall is the gateway's OnCall hook; it never blocks the request.
func (p *obsPublisher) onCall(c gateway.Call) {
	select {
	case p.queue <- c:
	default:
		p.v.d.Log.Debug("price observation dropped: queue full", "provider", c.Peer)
	}
}

func (p *obsPublisher) Start(ctx context.Context) error {
	p.start(ctx, func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case c := <-p.queue:
				p.publish(ctx, c)
			}
		}
	})
	return nil
}

func (p *obsPublisher) account() (a [32]byte) {
	copy(a[:], p.key.Public().(ed25519.PublicKey))
	return a
}

func (p *obsPublisher) publish(ctx context.Context, c gateway.Call) {
	me := p.account()
	if ok, err := p.v.d.Registry.ActiveValidator(ctx, me); err != nil || !ok {
		return
	}
	if op, _, ok, err := p.v.d.Registry.ProviderOperator(ctx, c.Machine); err != nil || !ok || op == me {
		return
	}
	o := &gossip.PriceObs{
		ProviderPeer: c.Peer.String(), ProviderMachine: c.Machine[:], ModelID: c.ModelID[:],
		Price: c.Price, LatencyMs: uint32(min(c.Latency.Milliseconds(), 10*60*1000)),
		InputTokens: min(c.InputTokens, 1<<32), OutputTokens: min(c.OutputTokens, 1<<32),
		Success: c.Success, TimeMs: c.Time.UnixMilli(), Seq: p.seq.Add(1), Probe: c.Probe,
	}
	if err := gossip.SignObservation(o, p.key); err != nil {
		p.v.d.Log.Warn("price observation not signed", "err", err)
		return
	}
	sess, err := p.v.d.Session.Current()
	if err != nil {
		return
	}
	if err := p.v.d.Gossip.Publish(ctx, sess, gossip.KindPriceObs, o); err != nil {
		p.v.d.Log.Debug("price observation not published", "provider", c.Peer, "err", err)
	}
}
