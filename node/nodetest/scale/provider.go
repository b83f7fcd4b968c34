package scale

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// simProvider publishes what a provider node publishes, on the same
// schedule, but never subscribes to or validates a topic: the cost of a
// provider is not what this harness measures, and 1,000 validating
// providers would need dozens of cores. It publishes through a publisher
// host, its own or one it shares (see Config.Publishers).
type simProvider struct {
	m     *member
	pub   *publisher
	an    gossip.Announcement
	seq   uint64
	every time.Duration

	mu        sync.Mutex
	published uint64
	errs      uint64
}

// regions are drawn by providers: countries and continents, as announced.
var regions = []string{"DE", "FR", "US", "JP", "BR", "Europe", "Asia", "North America"}

// publisher is a host with a GossipSub router that joins the provider
// topics without subscribing. The validators authenticate a message by
// the certificate inside it, never by the peer that propagated it, so
// providers sharing a publisher are validated exactly as providers with
// their own host.
type publisher struct {
	h      host.Host
	topics map[gossip.Kind]*pubsub.Topic
}

func newPublisher(ctx context.Context, h host.Host) (*publisher, error) {
	ps, err := pubsub.NewGossipSub(ctx, h,
		pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(),
		pubsub.WithMessageIdFn(gossip.MessageID),
		pubsub.WithMaxMessageSize(64<<10+1024))
	if err != nil {
		return nil, fmt.Errorf("scale: publisher gossipsub: %w", err)
	}
	p := &publisher{h: h, topics: map[gossip.Kind]*pubsub.Topic{}}
	for _, k := range []gossip.Kind{gossip.KindHeartbeat, gossip.KindAnnounce} {
		if p.topics[k], err = ps.Join(gossip.TopicName(network, k)); err != nil {
			return nil, fmt.Errorf("scale: publisher join %s: %w", k, err)
		}
	}
	return p, nil
}

func (p *publisher) close() error {
	var errs []error
	for _, t := range p.topics {
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}

func newSimProvider(m *member, pub *publisher, i int, cfg Config) *simProvider {
	return &simProvider{m: m, pub: pub, every: cfg.AnnounceInterval, an: announcement(m, i, cfg)}
}

// network is the simulated network's name (its topics' prefix).
const network = "scale"

// announcement is provider i's offer: the popular model and one other,
// at a price drawn from i so quotes differ.
func announcement(m *member, i int, cfg Config) gossip.Announcement {
	offer := func(k int) gossip.ModelOffer {
		id := modelID(k)
		return gossip.ModelOffer{
			ModelID: id[:], Name: fmt.Sprintf("scale-model-%d", k+1), WeightsHash: id[:], Engine: "embedded",
			RateCard:     terms.RateCard{InputTokens: uint64(1 + i%7), OutputTokens: uint64(2 + i%11), Minimum: 10},
			Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt},
		}
	}
	models := []gossip.ModelOffer{offer(popularModel)}
	if cfg.Models > 0 {
		models = append(models, offer(i%cfg.Models))
	}
	return gossip.Announcement{MachineID: m.machine[:], Models: models, Region: regions[i%len(regions)],
		HardwareClass: "cpu-generic", Capacity: 4}
}

func (p *simProvider) heartbeat(now time.Time) *gossip.Heartbeat {
	hb := &gossip.Heartbeat{MachineID: p.m.machine[:], TimeMs: now.UnixMilli(), Capacity: 4,
		InFlight: uint32(rand.IntN(5))}
	for _, o := range p.an.Models {
		hb.Models = append(hb.Models, gossip.ModelStatus{ModelID: o.ModelID, State: gossip.StateWarm})
	}
	return hb
}

// nextSeq follows the provider's rule: above the last and never below the
// wall clock in milliseconds.
func (p *simProvider) nextSeq(now time.Time) uint64 {
	p.seq = max(p.seq+1, uint64(now.UnixMilli()))
	return p.seq
}

// run publishes an announcement at once and every p.every, and a
// heartbeat every 2 s, starting at a random phase so the network's
// heartbeats spread over the interval as independent providers' do.
func (p *simProvider) run(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(rand.N(router.HeartbeatInterval)):
	}
	p.announce(ctx)
	p.beat(ctx)
	beat := time.NewTicker(router.HeartbeatInterval)
	defer beat.Stop()
	ann := time.NewTicker(p.every)
	defer ann.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			p.beat(ctx)
		case <-ann.C:
			p.announce(ctx)
		}
	}
}

func (p *simProvider) announce(ctx context.Context) {
	now := time.Now()
	an := p.an
	an.Seq, an.TimeMs = p.nextSeq(now), now.UnixMilli()
	p.publish(ctx, gossip.KindAnnounce, &an)
}

func (p *simProvider) beat(ctx context.Context) {
	now := time.Now()
	hb := p.heartbeat(now)
	hb.Seq = p.nextSeq(now)
	p.publish(ctx, gossip.KindHeartbeat, hb)
}

// publish seals msg exactly as gossip.Service.Publish does (the service
// also runs its own validator first, which a non-validating provider
// skips).
func (p *simProvider) publish(ctx context.Context, kind gossip.Kind, msg any) {
	data, err := seal(p.m, kind, msg)
	if err == nil {
		err = p.pub.topics[kind].Publish(ctx, data)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.errs++
		return
	}
	p.published++
}

// seal signs msg with m's session under kind's domain and encodes the
// envelope as it travels.
func seal(m *member, kind gossip.Kind, msg any) ([]byte, error) {
	spec, ok := gossip.Spec(kind)
	if !ok {
		return nil, fmt.Errorf("scale: unknown kind %q", kind)
	}
	payload, err := cborx.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("scale: encode %s: %w", kind, err)
	}
	env, err := m.sess.Seal(spec.Domain, spec.PayloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("scale: seal %s: %w", kind, err)
	}
	return env.Marshal()
}
