package scale

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"

	"github.com/libp2p/go-libp2p/core/host"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	ma "github.com/multiformats/go-multiaddr"
)

// market is one simulated network: its mocknet, cores (gateways, then
// validators) and providers.
type market struct {
	cfg       Config
	pool      *Pool
	mn        mocknet.Mocknet
	view      *chainView
	cores     []*core
	providers []*simProvider
	pubs      []*publisher
	observers []*observer
	ctx       context.Context // ends at close: the routers
	cancel    context.CancelFunc
	loops     context.Context // ends at stopLoops: publishing
	stopLoops context.CancelFunc
}

// hostN numbers the mocknet addresses of a run.
func addr(n int) ma.Multiaddr {
	ip := net.IPv4(10, byte(n>>16), byte(n>>8), byte(n))
	return ma.StringCast(fmt.Sprintf("/ip4/%s/tcp/4001", ip))
}

func (mk *market) addHost(m *member) (host.Host, error) {
	h, err := mk.mn.AddPeer(m.key, addr(len(mk.mn.Peers())+1))
	if err != nil {
		return nil, fmt.Errorf("scale: mocknet host: %w", err)
	}
	return h, nil
}

// connect links and connects a and b.
func (mk *market) connect(a, b host.Host) error {
	if _, err := mk.mn.LinkPeers(a.ID(), b.ID()); err != nil {
		return fmt.Errorf("scale: link: %w", err)
	}
	if _, err := mk.mn.ConnectPeers(a.ID(), b.ID()); err != nil {
		return fmt.Errorf("scale: connect: %w", err)
	}
	return nil
}

// build creates the cores and providers, then connects them: the cores to
// each other, each provider to cfg.Links cores drawn at random. Routers
// exist before connections so every hello carries the subscriptions.
func build(ctx context.Context, pool *Pool, cfg Config) (*market, error) {
	ctx, cancel := context.WithCancel(ctx)
	mk := &market{cfg: cfg, pool: pool, mn: mocknet.New(), view: newChainView(), ctx: ctx, cancel: cancel}
	mk.loops, mk.stopLoops = context.WithCancel(ctx)
	ncore := cfg.Gateways + cfg.Validators
	for j := range ncore {
		m, err := pool.get("core", j)
		if err != nil {
			return nil, errors.Join(err, mk.close())
		}
		if j >= cfg.Gateways {
			mk.view.addValidator(m)
		}
		h, err := mk.addHost(m)
		if err != nil {
			return nil, errors.Join(err, mk.close())
		}
		role := "gateway"
		if j >= cfg.Gateways {
			role = "validator"
		}
		c, err := newCore(ctx, role, m, h, mk.view, cfg)
		if err != nil {
			return nil, errors.Join(err, mk.close())
		}
		mk.cores = append(mk.cores, c)
	}
	npub := cfg.Providers
	if cfg.Publishers > 0 {
		npub = min(npub, cfg.Publishers)
	}
	for i := range cfg.Providers {
		m, err := pool.get("provider", i)
		if err != nil {
			return nil, errors.Join(err, mk.close())
		}
		mk.view.addProvider(m)
		if i < npub {
			// Publisher i is provider i's own host: with a publisher per
			// provider, each publishes under its own peer ID.
			h, err := mk.addHost(m)
			if err != nil {
				return nil, errors.Join(err, mk.close())
			}
			pub, err := newPublisher(ctx, h)
			if err != nil {
				return nil, errors.Join(err, mk.close())
			}
			mk.pubs = append(mk.pubs, pub)
		}
		mk.providers = append(mk.providers, newSimProvider(m, mk.pubs[i%npub], i, cfg))
	}
	for a := range mk.cores {
		for b := a + 1; b < len(mk.cores); b++ {
			if err := mk.connect(mk.cores[a].h, mk.cores[b].h); err != nil {
				return nil, errors.Join(err, mk.close())
			}
		}
	}
	for _, p := range mk.pubs {
		for _, j := range rand.Perm(ncore)[:cfg.Links] {
			if err := mk.connect(p.h, mk.cores[j].h); err != nil {
				return nil, errors.Join(err, mk.close())
			}
		}
	}
	return mk, nil
}

// start runs the providers' publishing loops and the validators'
// observation loops.
func (mk *market) start() {
	ctx := mk.loops
	for _, p := range mk.providers {
		go p.run(ctx)
	}
	for _, c := range mk.cores {
		if c.role != "validator" {
			continue
		}
		o := &observer{c: c, providers: mk.providers, interval: mk.cfg.ProbeInterval}
		mk.observers = append(mk.observers, o)
		go o.run(ctx)
	}
}

// close stops the loops, then the routers, then the mocknet.
func (mk *market) close() error {
	mk.stopLoops()
	var errs []error
	for _, p := range mk.pubs {
		errs = append(errs, p.close())
	}
	for _, c := range mk.cores {
		errs = append(errs, c.stop(context.Background()))
	}
	mk.cancel()
	errs = append(errs, mk.mn.Close())
	return errors.Join(errs...)
}
