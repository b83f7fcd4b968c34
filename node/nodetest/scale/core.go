package scale

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/pricefeed"
)

// core is a gateway or a validator: a real gossip service validating
// every topic, feeding a real provider table and price feed.
type core struct {
	role  string
	m     *member
	h     host.Host
	g     *gossip.Service
	table *router.Table
	feed  *pricefeed.Feed
	wire  *wire

	feedMu   sync.Mutex
	feedTime time.Duration // spent adding observations to the feed
	feedAdds uint64
}

// quiet is the logger of every simulated node: the figures are the output.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newCore(ctx context.Context, role string, m *member, h host.Host, view *chainView, cfg Config) (*core, error) {
	c := &core{role: role, m: m, h: h, table: router.NewTable(nil, quiet), wire: newWire()}
	c.feed = pricefeed.New(0, nil, nil)
	g, err := gossip.New(ctx, gossip.Config{Network: network, Window: gossip.DefaultWindow}, gossip.Deps{
		Host: h, Validators: view, Logger: quiet,
		PubSubOptions: routerOptions(c.wire, cfg), SubscriptionBuffer: subscriptionBuffer(cfg),
	})
	if err != nil {
		return nil, fmt.Errorf("scale: %s gossip: %w", role, err)
	}
	c.g = g
	g.OnAnnouncement(c.table.ApplyAnnouncement)
	g.OnHeartbeat(c.table.ApplyHeartbeat)
	g.OnPriceObs(c.observe)
	if err := g.Start(ctx); err != nil {
		return nil, fmt.Errorf("scale: %s gossip start: %w", role, err)
	}
	return c, nil
}

// routerOptions adds the wire counter and, for the comparison run of
// the fix, go-libp2p-pubsub's own queue sizes in place of the service's.
func routerOptions(w *wire, cfg Config) []pubsub.Option {
	opts := []pubsub.Option{pubsub.WithRawTracer(w)}
	if cfg.LibraryQueues {
		opts = append(opts, pubsub.WithValidateQueueSize(libraryQueue), pubsub.WithPeerOutboundQueueSize(libraryQueue))
	}
	return opts
}

func subscriptionBuffer(cfg Config) int {
	if cfg.LibraryQueues {
		return libraryQueue
	}
	return 0
}

// libraryQueue is go-libp2p-pubsub's default validation and per-peer
// outbound queue size.
const libraryQueue = 32

// observe is what a node does with an accepted observation (node's
// observe, less the gateway's health hint).
func (c *core) observe(v *gossip.VerifiedPriceObs) {
	var obs [32]byte
	copy(obs[:], v.Observer)
	start := time.Now()
	c.feed.Add(pricefeed.Observation{
		Observer: obs, Provider: v.ProviderPeer, Machine: hex.EncodeToString(v.ProviderMachine), Model: hex.EncodeToString(v.ModelID),
		Price: v.Price, LatencyMs: v.LatencyMs, InputTokens: v.InputTokens, OutputTokens: v.OutputTokens,
		Success: v.Success, Time: time.UnixMilli(v.TimeMs),
	})
	took := time.Since(start)
	c.feedMu.Lock()
	c.feedTime += took
	c.feedAdds++
	c.feedMu.Unlock()
}

// up counts the providers this node's table has up.
func (c *core) up(providers []*simProvider) int {
	n := 0
	for _, p := range providers {
		if c.table.Status(p.m.peer) == router.StatusUp {
			n++
		}
	}
	return n
}

func (c *core) stop(ctx context.Context) error { return c.g.Stop(ctx) }

// chainView is the consensus view price observations are admitted against:
// the validators' operator accounts and each provider's registration,
// static for a run (the chain is not what this harness measures).
type chainView struct {
	mu         sync.RWMutex
	validators map[[32]byte]bool
	providers  map[identity.MachineID]registration
}

type registration struct {
	operator [32]byte
	peer     string
}

func newChainView() *chainView {
	return &chainView{validators: map[[32]byte]bool{}, providers: map[identity.MachineID]registration{}}
}

func (v *chainView) addValidator(m *member) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.validators[account(m)] = true
}

func (v *chainView) addProvider(m *member) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.providers[m.machine] = registration{operator: account(m), peer: m.peer.String()}
}

func account(m *member) (a [32]byte) {
	copy(a[:], m.operator.Public().(ed25519.PublicKey))
	return a
}

func (v *chainView) ActiveValidator(_ context.Context, a [32]byte) (bool, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.validators[a], nil
}

func (v *chainView) ProviderOperator(_ context.Context, m identity.MachineID) ([32]byte, string, bool, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	r, ok := v.providers[m]
	return r.operator, r.peer, ok, nil
}

var _ gossip.ValidatorSet = (*chainView)(nil)
