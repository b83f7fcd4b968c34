package node

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/pricefeed"
)

// obsPublisher runs on validator nodes: it turns each call the gateway
// measured (buyers' calls and probes alike) into a price observation signed
// by the operator account HOME/account.key and gossips it. The account must
// be an active validator in consensus state for peers to admit it; calls to
// a provider the same account operates are not reported (peers would
// reject them).
type obsPublisher struct {
	n     *Node
	key   ed25519.PrivateKey
	seq   atomic.Uint64
	queue chan gateway.Call

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newObsPublisher(n *Node) (*obsPublisher, error) {
	key, err := consensus.LoadOrCreateAccountKey(n.cfg.Path(AccountKeyFile))
	if err != nil {
		return nil, err
	}
	p := &obsPublisher{n: n, key: key, queue: make(chan gateway.Call, 256)}
	// Sequence numbers start at the clock so a restart never reuses one.
	p.seq.Store(uint64(n.clock.Now().UnixMicro()))
	return p, nil
}

// onCall is the gateway's OnCall hook; it never blocks the request.
func (p *obsPublisher) onCall(c gateway.Call) {
	select {
	case p.queue <- c:
	default:
		p.n.log.Debug("price observation dropped: queue full", "provider", c.Peer)
	}
}

func (p *obsPublisher) Start(ctx context.Context) error {
	ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case c := <-p.queue:
				p.publish(ctx, c)
			}
		}
	}()
	return nil
}

func (p *obsPublisher) Stop(context.Context) error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	return nil
}

func (p *obsPublisher) account() (a [32]byte) {
	copy(a[:], p.key.Public().(ed25519.PublicKey))
	return a
}

func (p *obsPublisher) publish(ctx context.Context, c gateway.Call) {
	if p.n.registry == nil {
		return
	}
	me := p.account()
	if ok, err := p.n.registry.ActiveValidator(ctx, me); err != nil || !ok {
		return
	}
	if op, _, ok, err := p.n.registry.ProviderOperator(ctx, c.Machine); err != nil || !ok || op == me {
		return
	}
	o := &gossip.PriceObs{
		ProviderPeer: c.Peer.String(), ProviderMachine: c.Machine[:], ModelID: c.ModelID[:],
		Price: c.Price, LatencyMs: uint32(min(c.Latency.Milliseconds(), 10*60*1000)),
		InputTokens: min(c.InputTokens, 1<<32), OutputTokens: min(c.OutputTokens, 1<<32),
		Success: c.Success, TimeMs: c.Time.UnixMilli(), Seq: p.seq.Add(1), Probe: c.Probe,
	}
	if err := gossip.SignObservation(o, p.key); err != nil {
		p.n.log.Warn("price observation not signed", "err", err)
		return
	}
	sess, err := p.n.session.current()
	if err != nil {
		return
	}
	if err := p.n.gossip.Publish(ctx, sess, gossip.KindPriceObs, o); err != nil {
		p.n.log.Debug("price observation not published", "provider", c.Peer, "err", err)
	}
}

// observe adds an accepted observation to the node's feed.
func (n *Node) observe(v *gossip.VerifiedPriceObs) {
	var obs [32]byte
	copy(obs[:], v.Observer)
	n.feed.Add(pricefeed.Observation{
		Observer: obs, Provider: v.ProviderPeer, Machine: hex.EncodeToString(v.ProviderMachine), Model: hex.EncodeToString(v.ModelID),
		Price: v.Price, LatencyMs: v.LatencyMs, InputTokens: v.InputTokens, OutputTokens: v.OutputTokens,
		Success: v.Success, Time: time.UnixMilli(v.TimeMs),
	})
}
