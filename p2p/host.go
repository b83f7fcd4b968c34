package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p-kad-dht/records"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
)

var (
	// ErrNotStarted is returned by operations that need a started Host.
	ErrNotStarted = errors.New("p2p: host not started")
	// ErrStopped is returned once the Host has been stopped.
	ErrStopped = errors.New("p2p: host stopped")
)

// UserAgent is announced through identify.
const UserAgent = "tenzrod"

// Provider records expire on the DHT peers holding them after
// provideValidity unless re-provided; providers re-provide every
// reprovideInterval, so a provider that goes away drops out of lookups
// within provideValidity instead of the public DHT's 48 hours.
const (
	provideValidity  = 30 * time.Minute
	providerAddrTTL  = 30 * time.Minute
	providerGCPeriod = 10 * time.Minute
)

type lifecycle int

const (
	stateNew lifecycle = iota
	stateStarted
	stateStopped
)

// Host is a libp2p host with the network's private Kademlia DHT.
type Host struct {
	log       *slog.Logger
	t         timing
	host      host.Host
	dht       *dht.IpfsDHT
	bootstrap []peer.AddrInfo
	nat       *natMetrics

	// dhtBootstrap gates the bootstrap list handed to the DHT so that New
	// does not dial: the DHT only sees the peers once Start has run.
	dhtBootstrap atomic.Bool

	mu       sync.Mutex
	state    lifecycle
	cancel   context.CancelFunc
	provided map[[32]byte]*provideState
	kick     chan struct{}
	wg       sync.WaitGroup
}

// New builds the host: it loads (or creates) the peer key, listens on
// cfg.Listen and sets up the DHT, but dials nobody until Start.
func New(ctx context.Context, cfg Config, opts ...Option) (*Host, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("p2p: new host: %w", err)
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("p2p: option: %w", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key := o.key
	if key == nil {
		if cfg.KeyFile == "" {
			return nil, errors.New("p2p.key_file: required")
		}
		k, err := LoadOrCreateKey(cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		key = k
	}
	self, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("p2p: peer id: %w", err)
	}
	all, err := cfg.bootstrapInfos()
	if err != nil {
		return nil, err
	}
	// A node may find itself in a shared bootstrap list (devnet, validator
	// sets); dialling ourselves only produces errors.
	var boot []peer.AddrInfo
	for _, ai := range all {
		if ai.ID != self {
			boot = append(boot, ai)
		}
	}

	relays, err := cfg.relayInfos(self)
	if err != nil {
		return nil, err
	}
	nat := newNATMetrics(o.reg)
	h, err := newLibp2pHost(cfg, key, append(cfg.NAT.options(relays, nat), o.libp2p...))
	if err != nil {
		return nil, err
	}
	nat.host.Store(&h)
	hst := &Host{
		log:       o.log.With("peer", self.String()),
		t:         o.timing,
		host:      h,
		bootstrap: boot,
		nat:       nat,
		provided:  make(map[[32]byte]*provideState),
		kick:      make(chan struct{}, 1),
	}
	// A node known to be behind NAT answers no DHT queries: others would
	// keep it in their routing tables and wait on it through its relay.
	mode := dht.ModeClient
	if cfg.DHTServer && cfg.NAT.Reachability != ReachPrivate {
		mode = dht.ModeServer
	}
	d, err := dht.New(h,
		dht.ProtocolPrefix(protocol.ID("/tenzro/"+cfg.Network)),
		dht.Mode(mode),
		dht.BootstrapPeersFunc(hst.dhtBootstrapPeers),
		// Values (/pk, /ipns records) are not used: Ed25519 peer IDs embed
		// their public key and the network names content by provider records
		// only. Disabling them removes an unused write path.
		dht.DisableValues(),
		dht.ProviderManagerOpts(
			records.ProvideValidity(provideValidity),
			records.ProviderAddrTTL(providerAddrTTL),
			records.CleanupInterval(providerGCPeriod),
		),
	)
	if err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("p2p: dht: %w", err)
	}
	hst.dht = d
	hst.log.Info("p2p host ready", "network", cfg.Network, "dht_server", mode == dht.ModeServer,
		"addrs", hst.Addrs(), "bootstrap_peers", len(boot), "reachability", cfg.NAT.Reachability,
		"relay_service", cfg.NAT.Relay.Enabled, "relays", len(relays))
	return hst, nil
}

func newLibp2pHost(cfg Config, key crypto.PrivKey, extra []libp2p.Option) (host.Host, error) {
	cm, err := connmgr.NewConnManager(cfg.ConnLow, cfg.ConnHigh, connmgr.WithGracePeriod(time.Minute))
	if err != nil {
		return nil, fmt.Errorf("p2p: connection manager: %w", err)
	}
	rm, err := newResourceManager(cfg)
	if err != nil {
		_ = cm.Close()
		return nil, err
	}
	lopts := []libp2p.Option{
		libp2p.Identity(key),
		libp2p.ListenAddrStrings(cfg.Listen...),
		// TCP connections are secured with Noise and multiplexed with yamux;
		// QUIC brings its own TLS 1.3 handshake and stream multiplexing.
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Transport(libp2pquic.NewTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ResourceManager(rm),
		libp2p.ConnectionManager(cm),
		// The circuit-relay transport (libp2p's default) stays on: it dials
		// the /p2p-circuit addresses of nodes behind NAT and takes their
		// relayed connections. AutoNAT, AutoRelay, the relay service and
		// hole punching come from Config.NAT. UPnP port mapping is not
		// used: it opens ports on the operator's router unasked.
		// Loopback and private addresses must be advertised (identify, DHT
		// provider records) or devnets and LANs could not find each other.
		libp2p.NonPublicAddrPublishing(true),
		libp2p.UserAgent(UserAgent),
		libp2p.Ping(true),
	}
	if len(cfg.Listen) == 0 {
		lopts = append(lopts, libp2p.NoListenAddrs)
	}
	h, err := libp2p.New(append(lopts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("p2p: libp2p host: %w", err)
	}
	return h, nil
}

// newResourceManager uses libp2p's default limits scaled to this machine
// (1/8 of RAM, half the file descriptors), exactly as libp2p.New would, with
// the default per-service limits for identify/ping/etc. and the tenzro
// services' limits (AddServiceLimits). The other change is a floor on the
// system connection limits at ConnHigh plus headroom, so the connection
// manager, not the resource manager, sets the steady-state peer count
// (libp2p warns when ConnHigh exceeds the system limit).
func newResourceManager(cfg Config) (network.ResourceManager, error) {
	limits := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&limits)
	AddServiceLimits(&limits)
	floor := cfg.ConnHigh + cfg.ConnHigh/4 + 16
	limits.SystemBaseLimit.Conns = max(limits.SystemBaseLimit.Conns, floor)
	limits.SystemBaseLimit.ConnsInbound = max(limits.SystemBaseLimit.ConnsInbound, floor)
	limits.SystemBaseLimit.ConnsOutbound = max(limits.SystemBaseLimit.ConnsOutbound, floor)
	limits.SystemBaseLimit.FD = max(limits.SystemBaseLimit.FD, floor)
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(limits.AutoScale()))
	if err != nil {
		return nil, fmt.Errorf("p2p: resource manager: %w", err)
	}
	return rm, nil
}

// dhtBootstrapPeers feeds the DHT's own low-peer recovery (every two minutes
// or when its routing table empties) once Start has run.
func (h *Host) dhtBootstrapPeers() []peer.AddrInfo {
	if !h.dhtBootstrap.Load() {
		return nil
	}
	return h.bootstrap
}

// Host returns the underlying libp2p host, e.g. to register stream handlers
// or build a GossipSub router.
func (h *Host) Host() host.Host { return h.host }

// DHT returns the network's private Kademlia DHT.
func (h *Host) DHT() *dht.IpfsDHT { return h.dht }

// ID returns this node's peer ID.
func (h *Host) ID() peer.ID { return h.host.ID() }

// Addrs returns the host's dialable multiaddrs, each ending in /p2p/<id>.
func (h *Host) Addrs() []string {
	ai := peer.AddrInfo{ID: h.host.ID(), Addrs: h.host.Addrs()}
	full, err := peer.AddrInfoToP2pAddrs(&ai)
	if err != nil {
		return nil
	}
	out := make([]string, len(full))
	for i, a := range full {
		out[i] = a.String()
	}
	return out
}
