package provider

import (
	"math/bits"
	"time"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// reservation holds a paid call's worst-case price against its payer's
// escrow from admission until the call is owed (its final frame written)
// or ends without an answer. Without it, calls admitted at the same time
// would each find the whole escrow free, and a settler could be served
// as many calls at once as it can open, whatever its escrow covers.
type reservation struct {
	payer terms.AccountID
	worst uint64
	// lapse is zero while the call runs. Once the handler has returned a
	// final frame it is set: the frame is being written, and if it never
	// is (the stream broke) nothing is owed and the reservation lapses
	// then instead of holding the escrow for good.
	lapse time.Time
}

// reserveLocked reserves worst for g and returns the reservation's ID;
// the caller holds c.mu.
func (c *credit) reserveLocked(g grant, worst uint64) uint64 {
	c.nextID++
	m := c.resv[g.settler]
	if m == nil {
		m = map[uint64]reservation{}
		c.resv[g.settler] = m
	}
	m[c.nextID] = reservation{payer: g.payer, worst: worst}
	return c.nextID
}

// reservedLocked sums payer's live reservations under settler
// (saturating), dropping the lapsed ones; the caller holds c.mu.
func (c *credit) reservedLocked(payer, settler terms.AccountID) uint64 {
	m := c.resv[settler]
	now := c.clock.Now()
	var sum uint64
	for id, r := range m {
		if !r.lapse.IsZero() && !now.Before(r.lapse) {
			delete(m, id)
			continue
		}
		if r.payer == payer {
			var carry uint64
			if sum, carry = bits.Add64(sum, r.worst, 0); carry != 0 {
				sum = ^uint64(0)
			}
		}
	}
	if len(m) == 0 {
		delete(c.resv, settler)
	}
	return sum
}

// unreserveLocked drops g's reservation; the caller holds c.mu.
func (c *credit) unreserveLocked(g grant) {
	if m := c.resv[g.settler]; m != nil {
		delete(m, g.id)
		if len(m) == 0 {
			delete(c.resv, g.settler)
		}
	}
}

// release drops the reservation of a call that ends owing nothing.
func (c *credit) release(g grant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unreserveLocked(g)
}

// finishing starts the lapse of g's reservation: its final frame is on
// its way, and served replaces the reservation once it is written.
func (c *credit) finishing(g grant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.resv[g.settler]; m != nil {
		if r, ok := m[g.id]; ok {
			r.lapse = c.clock.Now().Add(c.wait)
			m[g.id] = r
		}
	}
}
