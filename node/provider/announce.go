package provider

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/router"
)

// providerLoop publishes the provider's announcement and heartbeats and
// provides its models in the DHT.
type providerLoop struct {
	p      *Provider
	models *modelSet
	seq    atomic.Uint64
	loaded chan struct{} // closed when every model has been tried
	joined chan struct{} // a peer joined the announce topic: announce soon

	degraded atomic.Bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newProviderLoop(pr *Provider, models *modelSet) *providerLoop {
	p := &providerLoop{p: pr, models: models, loaded: make(chan struct{}), joined: make(chan struct{}, 1)}
	pr.d.Gossip.OnPeerJoin(gossip.KindAnnounce, func(peer.ID) {
		select {
		case p.joined <- struct{}{}:
		default: // an announcement is already due
		}
	})
	return p
}

// joinAnnounceDelay is how long after a peer joins the announce topic the
// provider announces: GossipSub publishes to mesh peers only, and the
// newcomer is grafted into the mesh at the next gossip heartbeat (1 s).
// Joins while one announcement is pending share it.
const joinAnnounceDelay = 2 * time.Second

// nextSeq returns a sequence number above every one used before, across
// restarts: it never falls below the wall clock in milliseconds, and a
// provider sends far fewer than one message per millisecond.
func (p *providerLoop) nextSeq() uint64 {
	now := uint64(p.p.d.Clock.Now().UnixMilli())
	for {
		prev := p.seq.Load()
		next := max(prev+1, now)
		if p.seq.CompareAndSwap(prev, next) {
			return next
		}
	}
}

func (p *providerLoop) Start(ctx context.Context) error {
	ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		defer close(p.loaded)
		p.models.load(ctx)
		// The upstream clients exist now. (The loader still holds a count
		// of wg, so this Add cannot race Stop's Wait.)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			t := p.p.d.Clock.Ticker(upstreamCheckInterval)
			defer t.Stop()
			p.models.watchUpstreams(ctx, t.C)
		}()
		for _, o := range p.models.offers() {
			var id [32]byte
			copy(id[:], o.ModelID)
			if err := p.p.d.Host.ProvideModel(ctx, id); err != nil && ctx.Err() == nil {
				p.p.d.Log.Warn("provide model in DHT", "model", o.Name, "err", err)
			}
		}
	}()
	go p.run(ctx)
	return nil
}

func (p *providerLoop) Stop(context.Context) error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	return nil
}

func (p *providerLoop) run(ctx context.Context) {
	defer p.wg.Done()
	clk := p.p.d.Clock
	beat := clk.Ticker(router.HeartbeatInterval)
	defer beat.Stop()
	announce := clk.Ticker(p.p.cfg.AnnounceInterval)
	defer announce.Stop()
	p.announce(ctx)
	p.heartbeat(ctx)
	loaded := p.loaded
	var joinDue <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-loaded:
			// Model IDs of directory-backed models are known now.
			loaded = nil
			p.announce(ctx)
			p.heartbeat(ctx)
		case <-beat.C:
			p.heartbeat(ctx)
			if p.p.attest.rotated(p.p.d.Session) {
				p.announce(ctx) // the announced attestation binds the old key
			}
		case <-p.models.changed:
			// Routers learn a model went cold (or warm again) now, not at
			// the next beat.
			p.heartbeat(ctx)
		case <-announce.C:
			p.announce(ctx)
		case <-p.joined:
			// A newcomer would otherwise wait up to announce_interval for
			// this provider's offers.
			if joinDue == nil {
				joinDue = clk.After(joinAnnounceDelay)
			}
		case <-joinDue:
			joinDue = nil
			p.announce(ctx)
		}
	}
}

func (p *providerLoop) announce(ctx context.Context) {
	cfg := p.p.cfg
	offers := p.models.offers()
	experts := p.p.holder.offers()
	if len(offers) == 0 && len(experts) == 0 {
		return // nothing to announce until a model's ID is known
	}
	// One session for the attestation and the signature: the report must
	// bind the key that signs the announcement.
	sess, err := p.p.d.Session.Current()
	if err != nil {
		p.p.d.Log.Warn("publish failed", "kind", gossip.KindAnnounce, "err", err)
		return
	}
	m := p.p.d.Identity.MachineID()
	an := &gossip.Announcement{
		MachineID: m[:], Seq: p.nextSeq(), TimeMs: p.p.d.Clock.Now().UnixMilli(),
		Models: offers, Region: cfg.Region, HardwareClass: cfg.HardwareClass, Capacity: cfg.Capacity,
		Standby: p.p.sess.offer(), Experts: experts, Attestation: p.p.attest.forAnnouncement(sess), NoRetention: cfg.NoRetention,
	}
	if err := p.p.d.Gossip.Publish(ctx, sess, gossip.KindAnnounce, an); err != nil && ctx.Err() == nil {
		p.p.d.Log.Warn("publish failed", "kind", gossip.KindAnnounce, "err", err)
	}
}

// kick asks for an announcement soon (held experts finished loading).
func (p *providerLoop) kick() {
	select {
	case p.joined <- struct{}{}:
	default: // an announcement is already due
	}
}

func (p *providerLoop) heartbeat(ctx context.Context) {
	m := p.p.d.Identity.MachineID()
	statuses := p.models.statuses()
	if len(statuses) == 0 {
		return
	}
	hb := &gossip.Heartbeat{
		MachineID: m[:], Seq: p.nextSeq(), TimeMs: p.p.d.Clock.Now().UnixMilli(),
		InFlight: uint32(max(p.models.inFlight.Load(), 0)), Capacity: p.p.cfg.Capacity,
		QueueDepth: uint32(max(p.models.queued.Load(), 0)), Degraded: p.degraded.Load(),
		Models: statuses,
	}
	p.publish(ctx, gossip.KindHeartbeat, hb)
}

func (p *providerLoop) publish(ctx context.Context, kind gossip.Kind, msg any) {
	sess, err := p.p.d.Session.Current()
	if err == nil {
		err = p.p.d.Gossip.Publish(ctx, sess, kind, msg)
	}
	if err != nil && ctx.Err() == nil {
		p.p.d.Log.Warn("publish failed", "kind", kind, "err", err)
	}
}
