package node

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	drouting "github.com/libp2p/go-libp2p/p2p/discovery/routing"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/node/validator"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/buyerkeys"
	"github.com/tenzrod/tenzrod/router/chainview"
	"github.com/tenzrod/tenzrod/router/gateway"
	"github.com/tenzrod/tenzrod/router/gateway/otlp"
	"github.com/tenzrod/tenzrod/router/pricefeed"
)

// Lifecycle is a component that runs between Start and Stop.
type Lifecycle interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Node is one assembled tenzrod node.
type Node struct {
	cfg   Config
	log   *slog.Logger
	clock clock.Clock
	reg   *prometheus.Registry

	id        *identity.Identity
	session   *identity.SessionKeeper
	host      *p2p.Host
	gossip    *gossip.Service
	table     *router.Table
	provider  *provider.Provider // the provider role
	store     *store.Store
	outbox    *settle.Outbox       // the gateway's signed records, on a chain
	payments  *chainview.Payments  // the gateway's escrow reads, on a chain
	gateway   *gateway.Gateway     // every role but provider
	keys      *buyerkeys.Store     // run-time buyer keys, with the gateway
	validator *validator.Validator // validators with a chain
	api       *apiServer
	feed      *pricefeed.Feed // validators' price observations
	chain     *consensus.Node // nil when [chain] is disabled
	// accountKey is the operator's chain account, HOME/account.key (nil
	// without a chain).
	accountKey ed25519.PrivateKey
	// registry reads registrations and standings from the chain (nil
	// without one).
	registry *chainview.Registry
	// telemetry exports the gateway's traces ([telemetry]); nil when off.
	telemetry *otlp.Pipeline
	// attest is the [attest] policy gossip verifies attestations with;
	// quotes is Options.Quotes, for the provider role.
	attest *attest.Policy
	quotes provider.QuoteProvider
	// expertFault is Options.ExpertFault, for the provider role.
	expertFault provider.ExpertFault

	// life bounds what must outlive New's context (the pubsub router
	// stops when its context ends); Stop cancels it.
	life     context.Context
	lifeStop context.CancelFunc

	parts   []Lifecycle // started in order, stopped in reverse
	started []Lifecycle
	state   lifeState
	closed  bool // Stop has released the store and the identity
	mu      sync.Mutex
}

// Options are assembly hooks for tests.
type Options struct {
	Logger *slog.Logger
	Clock  clock.Clock
	// Listener, if set, serves the API instead of listening on cfg.API.Listen.
	Listener net.Listener
	// Quotes, if set, is the SEV-SNP guest a provider with
	// [provider.attestation] source = "sev-snp" asks (go-sev-guest's fake).
	Quotes provider.QuoteProvider
	// ExpertFault, if set, alters the rows this node computes as an expert
	// holder before it signs them: a holder computing with other weights
	// under the model's ID, for the dispute tests.
	ExpertFault provider.ExpertFault
}

// New assembles a node from cfg. Nothing runs until Start.
func New(ctx context.Context, cfg Config, o Options) (n *Node, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = clock.New()
	}
	n = &Node{cfg: cfg, log: o.Logger.With("role", cfg.Role), clock: o.Clock, reg: prometheus.NewRegistry(), quotes: o.Quotes,
		expertFault: o.ExpertFault}
	n.life, n.lifeStop = context.WithCancel(context.Background())
	// The named result is nil on a failed return: keep the node to close.
	self := n
	defer func() {
		if err != nil {
			self.closeEarly()
		}
	}()

	if n.id, err = identity.Open(cfg.HWKeyConfig()); err != nil {
		return nil, fmt.Errorf("node: %w", err) // already "identity: …"
	}
	if n.host, err = p2p.New(ctx, cfg.P2PConfig(), p2p.WithLogger(n.log), p2p.WithRegisterer(n.reg)); err != nil {
		return nil, err
	}
	peerKey := n.host.Host().Peerstore().PrivKey(n.host.ID())
	if peerKey == nil {
		return nil, fmt.Errorf("node: no private key for peer %s", n.host.ID())
	}
	n.session = identity.NewSessionKeeper(n.id, peerKey, cfg.Identity.SessionTTL, o.Clock, n.log)
	if _, err := n.session.Current(); err != nil {
		return nil, err
	}
	// The chain comes first: gossip pins peers to their registrations. A
	// nil *chainview.Registry must not become a non-nil ValidatorSet.
	var pins gossip.Pins
	var validators gossip.ValidatorSet
	if cfg.Chain.Enabled {
		cc, err := cfg.Chain.NodeConfig(cfg.Path, filepath.Base(cfg.Home))
		if err != nil {
			return nil, fmt.Errorf("config: chain: %w", err)
		}
		cc.Logger = n.log
		if n.chain, err = consensus.New(cc); err != nil {
			return nil, err
		}
		n.registry = chainview.NewRegistry(n.chain, n.clock)
		pins, validators = n.registry.Pins(), n.registry
		if err := consensus.RegisterHealthMetrics(n.reg, n.chain); err != nil {
			return nil, err
		}
		if err := registerChainHeight(n.reg, n.chain); err != nil {
			return nil, err
		}
	}
	if n.attest, err = cfg.Attest.Policy(cfg.Path); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if n.attest.TestRoot != nil {
		n.log.Warn("TEST-ONLY attestation root trusted ([attest] test_root): tee here proves nothing; vendor attestations are refused", "test_root", cfg.Attest.TestRoot)
	}
	n.gossip, err = gossip.New(n.life, cfg.GossipConfig(), gossip.Deps{
		Attest:     n.attest,
		Pins:       pins,
		Validators: validators,
		Host:       n.host.Host(),
		Discovery:  drouting.NewRoutingDiscovery(n.host.DHT()),
		Clock:      o.Clock,
		Registerer: n.reg,
		Logger:     n.log,
	})
	if err != nil {
		return nil, err
	}
	n.table = router.NewTable(o.Clock, n.log)
	if n.registry != nil {
		n.table.SetRegistry(n.registry)
	}
	n.gossip.OnAnnouncement(n.table.ApplyAnnouncement)
	n.gossip.OnHeartbeat(n.table.ApplyHeartbeat)
	n.feed = pricefeed.New(0, o.Clock, pricefeed.TableClaims(n.table))
	n.gossip.OnPriceObs(n.observe)
	if err := n.reg.Register(n.feed); err != nil {
		return nil, fmt.Errorf("node: price feed metrics: %w", err)
	}
	dur, err := store.ParseDurability(cfg.Router.Durability)
	if err != nil {
		return nil, fmt.Errorf("node: router.durability: %w", err)
	}
	if n.store, err = store.OpenWith(cfg.Path(filepath.Join("data", "receipts")), dur); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	n.parts = []Lifecycle{n.host, n.gossip}
	var acct *consensus.Submitter
	if n.chain != nil {
		n.parts = append(n.parts, n.chain)
		// The operator's account submits this node's own transactions
		// (registration, verdicts) and signs its payment records.
		if n.accountKey, err = consensus.LoadOrCreateAccountKey(cfg.Path(AccountKeyFile)); err != nil {
			return nil, fmt.Errorf("node: %w", err)
		}
		if acct, err = consensus.NewSubmitter(n.chain, n.accountKey, n.log); err != nil {
			return nil, err
		}
	}
	if cfg.Role == RoleProvider {
		if err := n.buildProvider(acct); err != nil {
			return nil, err
		}
	} else if err := n.buildGateway(acct); err != nil {
		return nil, err
	}
	if n.api, err = newAPIServer(n, o.Listener); err != nil {
		return nil, err
	}
	// Last in, first out: the table is swept only while everything runs.
	n.parts = append(n.parts, n.api, router.NewSweeper(n.table, n.clock, 250*time.Millisecond))
	return n, nil
}

// closeEarly releases what New opened when assembly fails half-way.
func (n *Node) closeEarly() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n.gossip != nil {
		_ = n.gossip.Stop(ctx)
	}
	if n.host != nil {
		_ = n.host.Stop(ctx)
	}
	n.lifeStop()
	if n.chain != nil {
		_ = n.chain.Stop(ctx)
	}
	if n.telemetry != nil {
		_ = n.telemetry.Stop(ctx)
	}
	if n.store != nil {
		_ = n.store.Close()
	}
	if n.id != nil {
		_ = n.id.Close()
	}
}

// lifeState is where a node is in its one life: a node runs once.
type lifeState int

const (
	stateNew lifeState = iota
	stateRunning
	stateStopped
)

// Errors of a Start or Stop out of turn.
var (
	ErrRunning = errors.New("node: already started")
	ErrStopped = errors.New("node: stopped (a node cannot be restarted; build a new one)")
)

// Start starts every component in order; on failure it stops those started
// and the node is done. A second Start, or a Start after Stop, is an error.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch n.state {
	case stateRunning:
		return ErrRunning
	case stateStopped:
		return ErrStopped
	}
	n.state = stateRunning
	for _, p := range n.parts {
		if err := p.Start(ctx); err != nil {
			stopErr := n.stopLocked(context.WithoutCancel(ctx))
			n.state = stateStopped
			return errors.Join(fmt.Errorf("node: start %T: %w", p, err), stopErr)
		}
		n.started = append(n.started, p)
	}
	n.log.Info("node started", "peer", n.host.ID(), "machine", n.id.MachineID(), "key_backend", n.id.Backend(),
		"api", n.api.URL(), "p2p", n.host.Addrs())
	return nil
}

// Stop stops components in reverse order and closes the identity. Stopping
// a stopped node does nothing.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.state, n.closed = stateStopped, true
	err := n.stopLocked(ctx)
	n.lifeStop()
	if n.telemetry != nil { // after every part that makes spans
		err = errors.Join(err, n.telemetry.Stop(ctx))
	}
	return errors.Join(err, n.store.Close(), n.id.Close())
}

func (n *Node) stopLocked(ctx context.Context) error {
	var errs []error
	for i := len(n.started) - 1; i >= 0; i-- {
		if err := n.started[i].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("node: stop %T: %w", n.started[i], err))
		}
	}
	n.started = nil
	return errors.Join(errs...)
}

// APIURL is the base URL of the node's HTTP API.
func (n *Node) APIURL() string { return n.api.URL() }

// Bootstrap is the address other nodes bootstrap from: this node's first
// listen address with its peer ID.
func (n *Node) Bootstrap() []string { return n.host.Addrs()[:1] }

// Host returns the libp2p host.
func (n *Node) Host() *p2p.Host { return n.host }

// Table returns the provider table.
func (n *Node) Table() *router.Table { return n.table }

// Gossip returns the gossip service.
func (n *Node) Gossip() *gossip.Service { return n.gossip }

// Identity returns the machine identity.
func (n *Node) Identity() *identity.Identity { return n.id }

// Provider returns the provider role, nil on other roles.
func (n *Node) Provider() *provider.Provider { return n.provider }

// Chain returns the in-process chain node, nil when [chain] is disabled.
func (n *Node) Chain() *consensus.Node { return n.chain }

// Config returns the node's configuration.
func (n *Node) Config() Config { return n.cfg }
