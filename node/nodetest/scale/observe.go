package scale

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
)

// observer publishes a validator's price observations at the rate its
// probes would produce them: one per provider per probe interval, each
// signed by the validator's operator key and sealed by its session, about
// the provider and the model the probe rotated to.
type observer struct {
	c         *core
	providers []*simProvider
	interval  time.Duration
	seq       uint64
	published atomic.Uint64 // read by the measurement while run publishes
	errs      atomic.Uint64
}

func (o *observer) run(ctx context.Context) {
	if len(o.providers) == 0 {
		return
	}
	// Probes spread over the interval: one every interval/N.
	tick := time.NewTicker(max(o.interval/time.Duration(len(o.providers)), time.Millisecond))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p := o.providers[i%len(o.providers)]
		if err := o.publish(ctx, p, i/len(o.providers)); err != nil {
			o.errs.Add(1)
			continue
		}
		o.published.Add(1)
	}
}

func (o *observer) publish(ctx context.Context, p *simProvider, round int) error {
	model := p.an.Models[round%len(p.an.Models)]
	now := time.Now()
	o.seq = max(o.seq+1, uint64(now.UnixMilli()))
	obs := &gossip.PriceObs{
		ProviderPeer: p.m.peer.String(), ProviderMachine: p.m.machine[:], ModelID: model.ModelID,
		Price: 10 + uint64(rand.IntN(50)), LatencyMs: uint32(20 + rand.IntN(200)), InputTokens: 1, OutputTokens: 4,
		Success: true, TimeMs: now.UnixMilli(), Seq: o.seq, Probe: true,
	}
	if err := gossip.SignObservation(obs, o.c.m.operator); err != nil {
		return fmt.Errorf("scale: sign observation: %w", err)
	}
	return o.c.g.Publish(ctx, o.c.m.sess, gossip.KindPriceObs, obs)
}
