package ledger

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Ledger is the replicated state machine over a Store: genesis, blocks of
// transactions each applied whole or not at all, commits, and the mempool
// view. A consensus engine drives it (InitChain, Finalize, Commit, Check);
// it knows nothing about the engine. All methods are safe for concurrent use.
type Ledger struct {
	mu    sync.Mutex
	log   *slog.Logger
	store *Store
	meta  ChainMeta // as of the last commit (chain ID and genesis time fixed), with its block's height and time

	pendingRoot   common.Hash // staged by Finalize, written by Commit
	pendingHeight int64
	pendingTime   int64 // the staged block's time, unix seconds
	pending       bool

	check *Overlay // mempool state: committed state plus Check effects
	sigs  *sigCache

	keep int64 // state versions kept (SetStateVersions); 0 keeps all

	dir  string    // the state's directory ("" = memory)
	snap snapshots // periodic state-sync snapshots (SetSnapshots)
}

// SetStateVersions makes Commit keep the state of the last n heights
// only, pruning the rest every max(1, n/10) blocks; 0 keeps every
// version.
func (l *Ledger) SetStateVersions(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keep = max(0, n)
}

// TxOutcome is how one transaction of a block ended.
type TxOutcome struct {
	Code   Code
	Log    string          // the rejection message; a settlement's summary when applied
	Kind   Kind            // 0 when the transaction did not decode
	Signer terms.AccountID // zero when the transaction did not decode
	Data   []byte          // an applied settlement's SettleReport (canonical CBOR)
}

// BlockResult is what Finalize returns: one outcome per transaction, the
// validator power changes (last change per key, in first-change order) and
// the new state root.
type BlockResult struct {
	Txs     []TxOutcome
	Changes []ValChange
	AppHash []byte
}

// Open opens the state in dir ("" keeps it in memory).
func Open(dir string, logger *slog.Logger) (*Ledger, error) {
	if logger == nil {
		logger = slog.Default()
	}
	st, err := OpenStore(dir)
	if err != nil {
		return nil, err
	}
	l := &Ledger{log: logger, store: st, sigs: newSigCache(), dir: dir}
	if st.Root() != types.EmptyRootHash {
		t, err := st.Open(st.Root())
		if err != nil {
			return nil, err
		}
		if _, err := Load(NewTrieKV(t), keyMeta, &l.meta); err != nil {
			return nil, err
		}
		l.meta.Height = st.Height()
		// A state committed by a version that kept the block time in the
		// state has no time record: the state's own is the block's then.
		if at, ok, err := st.TimeAt(st.Height()); err != nil {
			return nil, err
		} else if ok {
			l.meta.Time = at
		}
	}
	l.resetCheck()
	logger.Info("ledger: state opened", "dir", dir, "height", st.Height(), "root", st.Root())
	return l, nil
}

// Close closes the state database.
func (l *Ledger) Close() error {
	l.snap.stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.store.Close()
}

// Height is the last committed height.
func (l *Ledger) Height() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.store.Height()
}

// AppHash is the state root of the last commit.
func (l *Ledger) AppHash() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.store.Root()
	return r[:]
}

// Head is the last committed height and its state root, read together.
func (l *Ledger) Head() (int64, []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.store.Root()
	return l.store.Height(), r[:]
}

// AppHashAt is the state root committed at height h.
func (l *Ledger) AppHashAt(h int64) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, err := l.store.RootAt(h)
	if err != nil {
		return nil, err
	}
	return r[:], nil
}

// ChainID is the chain ID from genesis ("" before InitChain).
func (l *Ledger) ChainID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.meta.ChainID
}

// View runs f over a read-only view of the state committed at height (0 =
// the last commit), passing the height it is of. The ledger is locked
// while f runs, so f must not call back into it.
func (l *Ledger) View(height int64, f func(t *trie.Trie, height int64) error) error {
	return l.ViewAt(height, func(t *trie.Trie, at Stamp) error { return f(t, at.Height) })
}

// Stamp is a committed block's height and time (unix seconds): facts of
// the block, kept beside the state and not in it, so that a block that
// changes nothing leaves the app hash as it was.
type Stamp struct {
	Height int64
	Time   int64
}

// ViewAt is View passing the block's height and time.
func (l *Ledger) ViewAt(height int64, f func(t *trie.Trie, at Stamp) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if height == 0 {
		height = l.store.Height()
	}
	root, err := l.store.RootAt(height)
	if err != nil {
		return reject(CodeMalformed, "%v", err)
	}
	t, err := l.store.Open(root)
	if err != nil {
		return err
	}
	at, ok, err := l.store.TimeAt(height)
	if err != nil {
		return err
	}
	if !ok {
		// Committed by a version that kept the block time in the state.
		var m ChainMeta
		if _, err := Load(NewTrieKV(t), keyMeta, &m); err != nil {
			return err
		}
		at = m.Time
	}
	return f(t, Stamp{Height: height, Time: at})
}

func (l *Ledger) resetCheck() {
	l.check = nil
	if l.store.Root() == types.EmptyRootHash {
		return
	}
	t, err := l.store.Open(l.store.Root())
	if err != nil {
		l.log.Error("ledger: open check state", "err", err)
		return
	}
	l.check = NewOverlay(NewTrieKV(t))
}

// InitChain writes the genesis state of chainID and commits it as height
// initialHeight-1; it returns the genesis validators and the state root.
func (l *Ledger) InitChain(chainID string, genesisTime time.Time, initialHeight int64, g AppGenesis) ([]ValChange, []byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := g.Validate(); err != nil {
		return nil, nil, err
	}
	t, err := l.store.Open(types.EmptyRootHash)
	if err != nil {
		return nil, nil, err
	}
	height := max(initialHeight, 1) - 1
	meta := ChainMeta{ChainID: chainID, GenesisTime: genesisTime.Unix(), Height: height, Time: genesisTime.Unix()}
	kv := NewTrieKV(t)
	changes, err := g.apply(kv, meta)
	if err == nil {
		err = kv.Err()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: apply genesis: %w", err)
	}
	root, err := l.store.Stage(t, types.EmptyRootHash, height)
	if err != nil {
		return nil, nil, err
	}
	if err := l.store.Commit(root, height, meta.Time); err != nil {
		return nil, nil, err
	}
	l.meta = meta
	l.resetCheck()
	l.log.Info("ledger: genesis applied", "chain_id", chainID, "root", root, "validators", len(changes))
	return mergeChanges(changes), root[:], nil
}

// mergeChanges keeps the last change per key, in first-change order.
func mergeChanges(changes []ValChange) []ValChange {
	idx := map[string]int{}
	var out []ValChange
	for _, c := range changes {
		if i, ok := idx[string(c.PubKey)]; ok {
			out[i] = c
			continue
		}
		idx[string(c.PubKey)] = len(out)
		out = append(out, c)
	}
	return out
}
