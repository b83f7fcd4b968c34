package provider

import (
	"context"
	"fmt"
	"math/bits"
	"net/http"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Payments is what credit control reads of the provider's collected
// records (settle.Collector in a node).
type Payments interface {
	// Held is Σ price of records held for (payer, settler), not settled.
	Held(payer, settler terms.AccountID) uint64
	// Underpriced counts settler's records priced below this provider's
	// own price for the call: each counts as a record owed.
	Underpriced(settler terms.AccountID) int
}

// EscrowFunc reads an escrow's available balance (balance − pending
// withdrawals) from the chain; ok is false when it does not exist.
type EscrowFunc func(ctx context.Context, payer, settler terms.AccountID) (available uint64, ok bool, err error)

// credit holds each settler to its debts. Credit is per settler account,
// never per peer: a call is served only when its settler owes no record
// for a call that finished before it arrived (after waiting a little for
// one in flight) and the payer's escrow, less what is already signed to
// this provider and not settled, the calls served and not yet recorded
// and the worst cases of the calls in progress, covers the call's
// worst-case price. So a settler that stops signing records is
// refused after one call, and a fresh peer ID gains nothing.
type credit struct {
	chainID  string
	escrow   EscrowFunc
	payments Payments
	clock    clock.Clock
	wait     time.Duration

	authMu sync.Mutex
	auths  map[string]bool // verified authorizations, by caller ‖ payer ‖ settler ‖ sig

	mu      sync.Mutex
	owed    map[terms.AccountID]map[terms.Hash32]owedCall // by settler: served, not recorded
	expect  map[terms.Hash32]uint64                       // the provider's own price, by request digest
	issued  map[terms.Hash32]terms.Hash32                 // the receipt hash it signed, by request digest
	early   map[terms.Hash32]time.Time                    // records held before their call counted as served
	order   []terms.Hash32                                // expect in insertion order, for pruning
	changed chan struct{}                                 // closed and replaced when a record arrives
	resv    map[terms.AccountID]map[uint64]reservation    // by settler: admitted, not yet owed
	nextID  uint64

	cacheMu sync.Mutex
	cache   map[[64]byte]escrowRead
	// height, if set, is the chain's committed height: escrow reads are
	// reused only within one block.
	height func() int64
}

type owedCall struct {
	payer terms.AccountID
	price uint64
	at    time.Time
}

type escrowRead struct {
	avail  uint64
	ok     bool
	at     time.Time
	height int64 // the chain height before the read (with c.height)
}

// Bounds of the credit's memory.
const (
	maxAuthCache = 4096
	maxExpect    = 1 << 16
	escrowTTL    = time.Second
	// owedTTL forgives a debt no record came for. A hedge's loser that
	// finished before it was cancelled is owed by nobody (only the winner
	// is billed), and a gateway that crashed between the final frame and
	// signing cannot pay; neither should lock the settler out for good.
	// The price: a settler that never pays gets one call per owedTTL from
	// each provider; a gateway restarted after such a crash, or a loser
	// that finished, is refused by that provider (and fails over to
	// others) for at most owedTTL.
	owedTTL = 30 * time.Second
)

func newCredit(chainID string, escrow EscrowFunc, payments Payments, clk clock.Clock, wait time.Duration) *credit {
	return &credit{chainID: chainID, escrow: escrow, payments: payments, clock: clk, wait: wait,
		auths: map[string]bool{}, owed: map[terms.AccountID]map[terms.Hash32]owedCall{},
		expect: map[terms.Hash32]uint64{}, changed: make(chan struct{}), cache: map[[64]byte]escrowRead{},
		resv: map[terms.AccountID]map[uint64]reservation{}, issued: map[terms.Hash32]terms.Hash32{}, early: map[terms.Hash32]time.Time{}}
}

// grant is an admitted paid call; id names its reservation.
type grant struct {
	payer, settler terms.AccountID
	id             uint64
}

// verified reports whether req's authorization verifies for caller.
func (c *credit) verified(from peer.ID, req *infer.Request) bool {
	p := req.Pay
	if p == nil || len(p.Payer) != infer.AccountSize || len(p.Settler) != infer.AccountSize {
		return false
	}
	k := string(from) + string(p.Payer) + string(p.Settler) + string(p.Sig)
	c.authMu.Lock()
	ok, seen := c.auths[k]
	c.authMu.Unlock()
	if seen {
		return ok
	}
	ok = ledger.VerifyPayAuth(c.chainID, []byte(from), terms.AccountID(p.Payer), terms.AccountID(p.Settler), p.Sig) == nil
	c.authMu.Lock()
	if len(c.auths) >= maxAuthCache {
		c.auths = map[string]bool{}
	}
	c.auths[k] = ok
	c.authMu.Unlock()
	return ok
}

func payRefusal(code, format string, args ...any) *infer.ErrorFrame {
	return &infer.ErrorFrame{Status: http.StatusPaymentRequired, Code: code, Message: fmt.Sprintf(format, args...)}
}

// admit decides whether a paid call may start; worst is its worst-case
// price (every input byte a token, every allowed output token).
func (c *credit) admit(ctx context.Context, from peer.ID, req *infer.Request, worst uint64) (grant, *infer.ErrorFrame) {
	if !c.verified(from, req) {
		return grant{}, payRefusal(terms.CodePaymentRequired, "the pay authorization does not verify for caller %s on chain %q", from, c.chainID)
	}
	g := grant{payer: terms.AccountID(req.Pay.Payer), settler: terms.AccountID(req.Pay.Settler)}
	if err := c.awaitRecords(ctx, g.settler); err != nil {
		return grant{}, err
	}
	avail, ok, err := c.available(ctx, g.payer, g.settler)
	switch {
	case err != nil:
		e := payRefusal(terms.CodePaymentRequired, "cannot read the escrow of %s with settler %s: %v", g.payer, g.settler, err)
		e.Status, e.Retryable, e.RetryAfterMs = http.StatusServiceUnavailable, true, 1000
		return grant{}, e
	case !ok:
		return grant{}, payRefusal(terms.CodePaymentRequired, "payer %s has no escrow with settler %s", g.payer, g.settler)
	}
	held := c.payments.Held(g.payer, g.settler)
	// Check and reserve under one lock: calls admitted at once must not
	// each find the same balance free.
	c.mu.Lock()
	defer c.mu.Unlock()
	committed, carry := bits.Add64(held, c.owedByLocked(g.payer, g.settler), 0)
	var carry2 uint64
	committed, carry2 = bits.Add64(committed, c.reservedLocked(g.payer, g.settler), 0)
	if carry|carry2 != 0 || avail < committed || avail-committed < worst {
		return grant{}, payRefusal(terms.CodePaymentRequired,
			"the escrow of %s with settler %s has %d available, %d already owed to this provider; this call may cost %d",
			g.payer, g.settler, avail, committed, worst)
	}
	g.id = c.reserveLocked(g, worst)
	return g, nil
}

// awaitRecords waits up to c.wait for the records settler owed when the
// call arrived (a record for a call just served is usually on its way),
// then refuses. Calls finishing while it waits are not waited for: a
// gateway with many calls in flight always owes the records of the ones
// that just finished, and waiting for it to owe none at all would refuse
// an honest settler under load. An underpriced record never clears.
func (c *credit) awaitRecords(ctx context.Context, settler terms.AccountID) *infer.ErrorFrame {
	c.mu.Lock()
	pending := make([]terms.Hash32, 0, len(c.owed[settler]))
	for rd := range c.owed[settler] {
		pending = append(pending, rd)
	}
	c.mu.Unlock()
	var timeout <-chan time.Time
	for {
		c.mu.Lock()
		c.forgive(settler)
		m, ch := c.owed[settler], c.changed
		kept := pending[:0]
		for _, rd := range pending {
			if _, ok := m[rd]; ok {
				kept = append(kept, rd)
			}
		}
		pending = kept
		c.mu.Unlock()
		n := len(pending) + c.payments.Underpriced(settler)
		if n == 0 {
			return nil
		}
		if timeout == nil {
			timeout = c.clock.After(c.wait)
		}
		select {
		case <-ch:
		case <-timeout:
			e := payRefusal(terms.CodeUnpaid, "settler %s owes this provider %d payment record(s) for calls it was served", settler, n)
			e.Retryable, e.RetryAfterMs = true, c.wait.Milliseconds()
			return e
		case <-ctx.Done():
			return payRefusal(terms.CodeUnpaid, "settler %s owes this provider %d payment record(s)", settler, n)
		}
	}
}

// served notes a finished call under g: its settler owes a record for
// request digest rd, which the provider prices at price and answered with
// the receipt hashing to rh (in place of the call's reservation).
func (c *credit) served(g grant, rd terms.Hash32, price uint64, rh terms.Hash32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unreserveLocked(g)
	if _, ok := c.early[rd]; ok {
		// Its record arrived before the final frame's write returned
		// here: nothing is owed.
		delete(c.early, rd)
	} else {
		m := c.owed[g.settler]
		if m == nil {
			m = map[terms.Hash32]owedCall{}
			c.owed[g.settler] = m
		}
		m[rd] = owedCall{payer: g.payer, price: price, at: c.clock.Now()}
	}
	if _, ok := c.expect[rd]; !ok {
		c.order = append(c.order, rd)
	}
	c.expect[rd], c.issued[rd] = price, rh
	for len(c.order) > maxExpect {
		delete(c.expect, c.order[0])
		delete(c.issued, c.order[0])
		c.order = c.order[1:]
	}
}

// forgive drops settler's debts older than owedTTL; c.mu is held.
func (c *credit) forgive(settler terms.AccountID) {
	m := c.owed[settler]
	now := c.clock.Now()
	for rd, o := range m {
		if now.Sub(o.at) >= owedTTL {
			delete(m, rd)
		}
	}
	if len(m) == 0 {
		delete(c.owed, settler)
	}
}

// recorded clears a record's debt once the collector holds it.
func (c *credit) recorded(rec *receipt.PaymentRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.owed[rec.Settler]; m != nil {
		if _, ok := m[rec.RequestDigest]; ok {
			delete(m, rec.RequestDigest)
			if len(m) == 0 {
				delete(c.owed, rec.Settler)
			}
			close(c.changed)
			c.changed = make(chan struct{})
			return
		}
	}
	// Not owed (yet): the record may have overtaken the server noting the
	// call served; remember it briefly so that call owes nothing.
	now := c.clock.Now()
	if len(c.early) >= maxAuthCache {
		for rd, at := range c.early {
			if now.Sub(at) >= owedTTL {
				delete(c.early, rd)
			}
		}
	}
	if len(c.early) < maxAuthCache {
		c.early[rec.RequestDigest] = now
	}
}

// expected is the provider's own price of the call behind rd.
func (c *credit) expected(rd terms.Hash32) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.expect[rd]
	return p, ok
}

// issuedReceipt is the hash of the receipt the provider signed for the
// call behind rd.
func (c *credit) issuedReceipt(rd terms.Hash32) (terms.Hash32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.issued[rd]
	return h, ok
}

// owedByLocked sums the prices of calls served to payer under settler
// and not yet recorded (saturating: it only ever makes admission
// stricter); the caller holds c.mu.
func (c *credit) owedByLocked(payer, settler terms.AccountID) uint64 {
	var sum uint64
	for _, o := range c.owed[settler] {
		if o.payer == payer {
			var carry uint64
			if sum, carry = bits.Add64(sum, o.price, 0); carry != 0 {
				return ^uint64(0)
			}
		}
	}
	return sum
}

// available reads the escrow through a short cache: one chain read per
// escrow per second however many calls arrive.
func (c *credit) available(ctx context.Context, payer, settler terms.AccountID) (uint64, bool, error) {
	var k [64]byte
	copy(k[:32], payer[:])
	copy(k[32:], settler[:])
	now := c.clock.Now()
	var h int64
	if c.height != nil {
		h = c.height()
	}
	c.cacheMu.Lock()
	r, ok := c.cache[k]
	c.cacheMu.Unlock()
	// A read is reused only within escrowTTL and, on a chain, within the
	// block it was made in: a record that settles in a later block leaves
	// Held before a stale balance could count it twice the other way.
	if ok && now.Sub(r.at) < escrowTTL && r.height == h {
		return r.avail, r.ok, nil
	}
	avail, exists, err := c.escrow(ctx, payer, settler)
	if err != nil {
		return 0, false, err
	}
	c.cacheMu.Lock()
	if len(c.cache) >= maxAuthCache {
		c.cache = map[[64]byte]escrowRead{}
	}
	c.cache[k] = escrowRead{avail: avail, ok: exists, at: now, height: h}
	c.cacheMu.Unlock()
	return avail, exists, nil
}
