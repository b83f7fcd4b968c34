package consensus

import (
	"errors"
	"sync"

	dbm "github.com/cometbft/cometbft-db"
)

// errDBClosed is what guarded writes return after Close.
var errDBClosed = errors.New("consensus: database closed")

// guardedDB wraps a CometBFT database so that use after Close fails softly
// instead of panicking: reads return "not found", writes, batch writes and
// new iterators return errDBClosed. CometBFT v1's consensus gossip routines
// can wake from a sleep and read the block store after the node has
// stopped and closed it, and its tx indexer can still be writing a block's
// index; in-process restarts (tests, the devnet) would otherwise crash the
// whole process. Close waits for operations in flight and is idempotent.
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

// guard runs f unless the database is closed.
func (g *guardedDB) guard(f func() error) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return errDBClosed
	}
	return f()
}

func (g *guardedDB) Set(k, v []byte) error { return g.guard(func() error { return g.DB.Set(k, v) }) }
func (g *guardedDB) SetSync(k, v []byte) error {
	return g.guard(func() error { return g.DB.SetSync(k, v) })
}
func (g *guardedDB) Delete(k []byte) error { return g.guard(func() error { return g.DB.Delete(k) }) }
func (g *guardedDB) DeleteSync(k []byte) error {
	return g.guard(func() error { return g.DB.DeleteSync(k) })
}

func (g *guardedDB) Iterator(start, end []byte) (it dbm.Iterator, err error) {
	err = g.guard(func() error { it, err = g.DB.Iterator(start, end); return err })
	return it, err
}

func (g *guardedDB) ReverseIterator(start, end []byte) (it dbm.Iterator, err error) {
	err = g.guard(func() error { it, err = g.DB.ReverseIterator(start, end); return err })
	return it, err
}

func (g *guardedDB) NewBatch() dbm.Batch {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return &guardedBatch{g: g}
	}
	return &guardedBatch{Batch: g.DB.NewBatch(), g: g}
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

// guardedBatch writes only while its database is open. A batch made after
// Close has no underlying batch and fails every call.
type guardedBatch struct {
	dbm.Batch
	g *guardedDB
}

func (b *guardedBatch) Set(k, v []byte) error {
	if b.Batch == nil {
		return errDBClosed
	}
	return b.Batch.Set(k, v)
}

func (b *guardedBatch) Delete(k []byte) error {
	if b.Batch == nil {
		return errDBClosed
	}
	return b.Batch.Delete(k)
}

func (b *guardedBatch) Write() error {
	return b.g.guard(func() error {
		if b.Batch == nil {
			return errDBClosed
		}
		return b.Batch.Write()
	})
}

func (b *guardedBatch) WriteSync() error {
	return b.g.guard(func() error {
		if b.Batch == nil {
			return errDBClosed
		}
		return b.Batch.WriteSync()
	})
}

func (b *guardedBatch) Close() error {
	if b.Batch == nil {
		return nil
	}
	return b.Batch.Close()
}
