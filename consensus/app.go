package consensus

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// AppVersion is the application protocol version reported to CometBFT.
const AppVersion = 1

// App is the ABCI 2.0 application. All methods are safe for concurrent use.
type App struct {
	abci.BaseApplication

	mu    sync.Mutex
	log   *slog.Logger
	store *Store
	meta  ChainMeta // as of the last commit (chain ID and genesis time fixed)

	pendingRoot   common.Hash // staged by FinalizeBlock, written by Commit
	pendingHeight int64
	pending       bool

	check *overlay // mempool state: committed state plus CheckTx effects
}

var _ abci.Application = (*App)(nil)

// NewApp opens the application state in dir ("" keeps it in memory).
func NewApp(dir string, logger *slog.Logger) (*App, error) {
	if logger == nil {
		logger = slog.Default()
	}
	st, err := OpenStore(dir)
	if err != nil {
		return nil, err
	}
	a := &App{log: logger, store: st}
	if st.Root() != types.EmptyRootHash {
		t, err := st.Open(st.Root())
		if err != nil {
			return nil, fmt.Errorf("consensus: %w", err)
		}
		if _, err := load(&trieKV{t: t}, keyMeta, &a.meta); err != nil {
			return nil, err
		}
	}
	a.resetCheck()
	logger.Info("consensus: state opened", "dir", dir, "height", st.Height(), "root", st.Root())
	return a, nil
}

// Close closes the state database.
func (a *App) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.store.Close()
}

// Height and AppHash report the last committed state.
func (a *App) Height() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.store.Height()
}

// AppHash is the state root of the last commit.
func (a *App) AppHash() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.store.Root()
	return r[:]
}

// AppHashAt is the state root committed at height h.
func (a *App) AppHashAt(h int64) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, err := a.store.RootAt(h)
	if err != nil {
		return nil, err
	}
	return r[:], nil
}

// ChainID is the chain ID from genesis ("" before InitChain).
func (a *App) ChainID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.meta.ChainID
}

func (a *App) resetCheck() {
	a.check = nil
	if a.store.Root() == types.EmptyRootHash {
		return
	}
	t, err := a.store.Open(a.store.Root())
	if err != nil {
		a.log.Error("consensus: open check state", "err", err)
		return
	}
	a.check = newOverlay(&trieKV{t: t})
}

// Info reports the last committed height and app hash so CometBFT replays
// exactly the blocks the application has not committed.
func (a *App) Info(context.Context, *abci.InfoRequest) (*abci.InfoResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	resp := &abci.InfoResponse{Data: "tenzro", Version: "1", AppVersion: AppVersion,
		LastBlockHeight: a.store.Height()}
	if a.store.Height() > 0 {
		r := a.store.Root()
		resp.LastBlockAppHash = r[:]
	}
	return resp, nil
}

// InitChain writes the genesis state from app_state and returns its
// validators and app hash.
func (a *App) InitChain(_ context.Context, req *abci.InitChainRequest) (*abci.InitChainResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, err := ParseAppGenesis(req.AppStateBytes)
	if err != nil {
		return nil, err
	}
	t, err := a.store.Open(types.EmptyRootHash)
	if err != nil {
		return nil, err
	}
	height := max(req.InitialHeight, 1) - 1
	meta := ChainMeta{ChainID: req.ChainId, GenesisTime: req.Time.Unix(), Height: height, Time: req.Time.Unix()}
	kv := &trieKV{t: t}
	changes, err := g.apply(kv, meta)
	if err == nil {
		err = kv.err
	}
	if err != nil {
		return nil, fmt.Errorf("consensus: apply genesis: %w", err)
	}
	root, err := a.store.Stage(t, types.EmptyRootHash, height)
	if err != nil {
		return nil, err
	}
	if err := a.store.Commit(root, height); err != nil {
		return nil, err
	}
	a.meta = meta
	a.resetCheck()
	a.log.Info("consensus: genesis applied", "chain_id", req.ChainId, "root", root, "validators", len(changes))
	return &abci.InitChainResponse{Validators: validatorUpdates(changes), AppHash: root[:]}, nil
}

// validatorUpdates keeps the last change per key, in first-change order.
func validatorUpdates(changes []valChange) []abci.ValidatorUpdate {
	idx := map[string]int{}
	var out []abci.ValidatorUpdate
	for _, c := range changes {
		u := abci.ValidatorUpdate{Power: c.power, PubKeyType: "ed25519", PubKeyBytes: c.pubKey}
		if i, ok := idx[string(c.pubKey)]; ok {
			out[i] = u
			continue
		}
		idx[string(c.pubKey)] = len(out)
		out = append(out, u)
	}
	return out
}
