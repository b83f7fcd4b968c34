package consensus

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// AppVersion is the application protocol version reported to CometBFT.
const AppVersion = 1

// App is the ABCI 2.0 application: an adapter that turns CometBFT's calls
// into calls on the ledger state machine. All methods are safe for
// concurrent use.
type App struct {
	abci.BaseApplication

	log *slog.Logger
	l   *ledger.Ledger

	snapMu  sync.Mutex
	restore *ledger.Restore // the snapshot being restored (OfferSnapshot)
	synced  restoreProgress // what state sync restored so far, for SyncProgress

	retain retention // RetainHeight's rules (SetRetain)
}

var _ abci.Application = (*App)(nil)

// NewApp opens the application state in dir ("" keeps it in memory).
func NewApp(dir string, logger *slog.Logger) (*App, error) {
	if logger == nil {
		logger = slog.Default()
	}
	l, err := ledger.Open(dir, logger)
	if err != nil {
		return nil, fmt.Errorf("consensus: %w", err)
	}
	return &App{log: logger, l: l}, nil
}

// Ledger is the state machine the application drives.
func (a *App) Ledger() *ledger.Ledger { return a.l }

// Close closes the state database.
func (a *App) Close() error { return a.l.Close() }

// Height is the last committed height.
func (a *App) Height() int64 { return a.l.Height() }

// AppHash is the state root of the last commit.
func (a *App) AppHash() []byte { return a.l.AppHash() }

// AppHashAt is the state root committed at height h.
func (a *App) AppHashAt(h int64) ([]byte, error) { return a.l.AppHashAt(h) }

// ChainID is the chain ID from genesis ("" before InitChain).
func (a *App) ChainID() string { return a.l.ChainID() }

// Info reports the last committed height and app hash so CometBFT replays
// exactly the blocks the application has not committed.
func (a *App) Info(context.Context, *abci.InfoRequest) (*abci.InfoResponse, error) {
	h, hash := a.l.Head()
	resp := &abci.InfoResponse{Data: "tenzro", Version: "1", AppVersion: AppVersion, LastBlockHeight: h}
	if h > 0 {
		resp.LastBlockAppHash = hash
	}
	return resp, nil
}

// InitChain writes the genesis state from app_state and returns its
// validators and app hash.
func (a *App) InitChain(_ context.Context, req *abci.InitChainRequest) (*abci.InitChainResponse, error) {
	g, err := ledger.ParseAppGenesis(req.AppStateBytes)
	if err != nil {
		return nil, err
	}
	changes, root, err := a.l.InitChain(req.ChainId, req.Time, req.InitialHeight, g)
	if err != nil {
		return nil, err
	}
	return &abci.InitChainResponse{Validators: validatorUpdates(changes), AppHash: root}, nil
}

func validatorUpdates(changes []ledger.ValChange) []abci.ValidatorUpdate {
	out := make([]abci.ValidatorUpdate, len(changes))
	for i, c := range changes {
		out[i] = abci.ValidatorUpdate{Power: c.Power, PubKeyType: "ed25519", PubKeyBytes: c.PubKey}
	}
	return out
}
