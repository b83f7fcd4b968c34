package chainview

import (
	"context"
	"sync"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// Names resolves model names through the chain's name records, each
// read with its proof from the node's own chain. A name's answer is kept
// for the block it was read in: every request names its model, and a
// record changes only with a block.
type Names struct {
	c *consensus.Node

	mu     sync.Mutex
	height int64 // the block the answers in ids were read at
	ids    map[string]nameSeen
}

type nameSeen struct {
	id [32]byte
	ok bool
}

// maxNamesSeen bounds the names kept for one block.
const maxNamesSeen = 1024

// NewNames resolves through c.
func NewNames(c *consensus.Node) *Names {
	return &Names{c: c, ids: map[string]nameSeen{}}
}

// Resolve implements gateway.Names.
func (c *Names) Resolve(ctx context.Context, name string) ([32]byte, bool, error) {
	if ledger.CheckName(name) != nil {
		return [32]byte{}, false, nil // no record can bind it
	}
	h := c.c.App().Height()
	c.mu.Lock()
	if c.height != h {
		c.height, c.ids = h, map[string]nameSeen{}
	}
	seen, hit := c.ids[name]
	c.mu.Unlock()
	if hit {
		return seen.id, seen.ok, nil
	}
	id, _, ok, err := c.c.NameRecord(ctx, name)
	if err != nil {
		return id, ok, err
	}
	c.mu.Lock()
	// Kept only when no block committed during the read: the answer is
	// then the one of block h.
	if c.height == h && c.c.App().Height() == h && len(c.ids) < maxNamesSeen {
		c.ids[name] = nameSeen{id: id, ok: ok}
	}
	c.mu.Unlock()
	return id, ok, nil
}
