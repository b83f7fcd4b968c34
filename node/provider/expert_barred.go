package provider

import (
	"context"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// barredReader is what the barred view reads of the chain.
type barredReader interface {
	Provider(ctx context.Context, m identity.MachineID) (ledger.Provider, bool, error)
}

// barredView says whether the chain bars a machine: convicted, and not
// re-bonded since (consensus.Provider.Barred). A barred holder is out of
// this serving provider's rotation from the first block that shows the
// conviction: the chain would not pay it, and its answers were found
// wrong. Each machine is read at most once per committed block, since
// the holder table asks on every layer of every token.
type barredView struct {
	chain  barredReader
	height func() int64

	mu   sync.Mutex
	seen map[identity.MachineID]barredAt
}

type barredAt struct {
	height int64
	barred bool
}

func newBarredView(chain barredReader, height func() int64) *barredView {
	return &barredView{chain: chain, height: height, seen: map[identity.MachineID]barredAt{}}
}

// barred reports whether m is barred at the last committed block. When
// the chain cannot answer, the last answer stands (none: not barred), so
// a slow query never empties the rotation.
func (b *barredView) barred(m identity.MachineID) bool {
	h := b.height()
	b.mu.Lock()
	c, hit := b.seen[m]
	b.mu.Unlock()
	if hit && c.height == h {
		return c.barred
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p, ok, err := b.chain.Provider(ctx, m)
	if err != nil {
		return c.barred
	}
	c = barredAt{height: h, barred: ok && p.Barred}
	b.mu.Lock()
	b.seen[m] = c
	b.mu.Unlock()
	return c.barred
}
