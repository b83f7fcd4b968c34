package consensus

import (
	"sync"

	dbm "github.com/cometbft/cometbft-db"
)

// guardedDB wraps a CometBFT database so that reads after Close return
// "not found" instead of panicking. CometBFT v1's consensus gossip
// routines can wake from a sleep and read the block store after the node
// has stopped and closed it; in-process restarts (tests, the devnet) would
// otherwise crash the whole process. Close is idempotent.
type guardedDB struct {
	dbm.DB
	mu     sync.RWMutex
	closed bool
}

func (g *guardedDB) Get(key []byte) ([]byte, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, nil
	}
	return g.DB.Get(key)
}

func (g *guardedDB) Has(key []byte) (bool, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return false, nil
	}
	return g.DB.Has(key)
}

func (g *guardedDB) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	return g.DB.Close()
}
