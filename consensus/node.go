package consensus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	dbm "github.com/cometbft/cometbft-db"
	cmtcfg "github.com/cometbft/cometbft/config"
	nm "github.com/cometbft/cometbft/node"
	"github.com/cometbft/cometbft/p2p"
	"github.com/cometbft/cometbft/privval"
	"github.com/cometbft/cometbft/proxy"
	"github.com/cometbft/cometbft/rpc/client/local"
)

// Node is a CometBFT node running the App in-process.
type Node struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	app    *App
	cmt    *nm.Node
	client *local.Local
	// unclosed are the databases CometBFT opened; it does not close all of
	// them (the tx index) on stop, so Stop closes every one (idempotently)
	// and a restart can reopen them.
	unclosed []dbm.DB

	sync syncPlan // how this start restores state (setupStateSync)

	watch     *watchdog
	walFile   string // CometBFT's consensus WAL (head file), pruned while running
	stopWatch context.CancelFunc
	watchDone chan struct{}
}

// New prepares a node: it creates missing keys under cfg.Home, opens the
// application state (cfg.Home/data/tenzro-state) and builds the CometBFT
// node. Nothing listens until Start.
func New(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger = logger.With("node", cfg.Moniker)
	if _, err := InitHome(cfg.Home); err != nil {
		return nil, err
	}
	ccfg, err := cfg.cometConfig()
	if err != nil {
		return nil, err
	}
	nk, err := p2p.LoadNodeKey(ccfg.NodeKeyFile())
	if err != nil {
		return nil, fmt.Errorf("consensus: node key: %w", err)
	}
	pv := privval.LoadFilePV(ccfg.PrivValidatorKeyFile(), ccfg.PrivValidatorStateFile())
	if cfg.Follower {
		if err := checkFollower(ccfg.GenesisFile(), pv.Key.PubKey.Bytes()); err != nil {
			return nil, err
		}
	}
	app, err := NewApp(filepath.Join(cfg.Home, "data", "tenzro-state"), logger)
	if err != nil {
		return nil, err
	}
	app.Ledger().SetStateVersions(cfg.StateVersions)
	if err := configureSnapshots(app, cfg, ccfg.GenesisFile()); err != nil {
		return nil, errors.Join(err, app.Close())
	}
	n := &Node{cfg: cfg, log: logger, app: app, walFile: ccfg.Consensus.WalFile()}
	if err := n.setupStateSync(ccfg); err != nil {
		return nil, errors.Join(err, app.Close())
	}
	dbProvider := func(ctx *cmtcfg.DBContext) (dbm.DB, error) {
		db, err := openCometDB(ctx)
		if err != nil {
			return nil, err
		}
		g := &guardedDB{DB: db}
		n.unclosed = append(n.unclosed, g)
		return g, nil
	}
	cmt, err := nm.NewNode(context.Background(), ccfg, pv, nk, proxy.NewLocalClientCreator(app),
		nm.DefaultGenesisDocProviderFunc(ccfg), dbProvider,
		nm.DefaultMetricsProvider(ccfg.Instrumentation), cometLogger{l: logger})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("consensus: build node: %w", err), n.closeDBs(), app.Close())
	}
	n.cmt = cmt
	return n, nil
}

// Start starts CometBFT: it replays stored blocks into the app, dials the
// peers and joins consensus.
func (n *Node) Start(context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.cmt.Start(); err != nil {
		return fmt.Errorf("consensus: start node: %w", err)
	}
	n.client = local.New(n.cmt)
	n.watch = newWatchdog(n.cfg, n.cmt.Switch(), n.app.Height, func(peers []string) {
		n.log.Info("consensus: redialling persistent peers that are not connected", "peers", peers)
	})
	ctx, cancel := context.WithCancel(context.Background())
	n.stopWatch, n.watchDone = cancel, make(chan struct{})
	go func() {
		defer close(n.watchDone)
		var wg sync.WaitGroup
		wg.Go(func() { pruneWALEvery(ctx, n.walFile, walPruneEvery, n.log) })
		n.watch.run(ctx)
		wg.Wait()
	}()
	n.log.Info("consensus: node started", "id", n.cmt.NodeInfo().ID(), "p2p", n.cfg.P2PListen)
	return nil
}

// Health is what the watchdog last saw: height progress and peers. Before
// Start it holds the height only.
func (n *Node) Health() Health {
	n.mu.Lock()
	w := n.watch
	n.mu.Unlock()
	if w == nil {
		return Health{Height: n.app.Height()}
	}
	return w.snapshot()
}

// Stop stops CometBFT and closes the application state. It waits for
// CometBFT to finish or for ctx to end.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	if n.stopWatch != nil {
		n.stopWatch()
		<-n.watchDone
		n.stopWatch, n.watch = nil, nil
	}
	if n.cmt.IsRunning() {
		if err := n.cmt.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("consensus: stop node: %w", err))
		}
		done := make(chan struct{})
		go func() { n.cmt.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("consensus: stop node: %w", ctx.Err()))
		}
	}
	errs = append(errs, n.closeDBs())
	if err := n.app.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (n *Node) closeDBs() error {
	var errs []error
	for _, db := range n.unclosed {
		if err := db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("consensus: close db: %w", err))
		}
	}
	n.unclosed = nil
	return errors.Join(errs...)
}

// App returns the application.
func (n *Node) App() *App { return n.app }

// NodeID is the node's p2p ID.
func (n *Node) NodeID() string { return string(n.cmt.NodeInfo().ID()) }

// Client is the in-process CometBFT RPC client (nil before Start).
func (n *Node) Client() *local.Local {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.client
}
