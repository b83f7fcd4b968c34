package expert

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// group is the batches of one layer sent to one holder in one exchange.
type group struct {
	holder Holder
	idx    []int // indexes into the layer's batches, ascending
}

// outcome is how one exchange ended.
type outcome struct {
	group   *group
	rows    [][][]float32 // per batch of the group, when err is nil
	outputs [][]byte      // the same rows as received, when err is nil
	receipt []byte
	wire    Wire
	tokens  int
	err     error
}

// assign picks, for each batch left, its first holder not yet tried in
// this layer (a holder with an open breaker after every other), and
// groups the batches by holder, in expert order.
func (c *Caller) assign(layer int, batches []Batch, left []int, tried []map[peer.ID]bool, lastErr []error) ([]*group, error) {
	byPeer := map[peer.ID]*group{}
	var groups []*group
	for _, i := range left {
		e := batches[i].Expert
		var pick *Holder
		for pass := 0; pass < 2 && pick == nil; pass++ {
			for _, h := range c.table.Holders(c.cfg.Model, layer, e) {
				if tried[i][h.Peer] || h.Machine.IsZero() || (pass == 0 && c.breaker.open(h.Peer)) {
					continue
				}
				pick = &h
				break
			}
		}
		if pick == nil {
			c.stats.missing()
			err := fmt.Errorf("%w: layer %d expert %d (%d holders tried)", ErrNoHolder, layer, e, len(tried[i]))
			if lastErr[i] != nil {
				err = fmt.Errorf("%w; last: %w", err, lastErr[i])
			}
			return nil, err
		}
		g := byPeer[pick.Peer]
		if g == nil {
			g = &group{holder: *pick}
			byPeer[pick.Peer] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
	}
	for _, g := range groups {
		sort.Ints(g.idx)
	}
	return groups, nil
}

// run performs every group's exchange at once and waits for all of them.
func (c *Caller) run(ctx context.Context, layer int, groups []*group, wire []WireBatch) []outcome {
	out := make([]outcome, len(groups))
	var wg sync.WaitGroup
	for k, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[k] = c.exchange(ctx, layer, g, wire)
		}()
	}
	wg.Wait()
	return out
}

// exchange sends one holder its batches and accepts the answer only if
// its receipt verifies and matches exactly what was sent and received.
func (c *Caller) exchange(ctx context.Context, layer int, g *group, wire []WireBatch) outcome {
	o := outcome{group: g}
	req := &Request{Network: c.cfg.Network, Model: c.cfg.Model, Layer: uint32(layer), Dim: uint32(c.cfg.Dim),
		Batches: make([]WireBatch, len(g.idx))}
	for j, i := range g.idx {
		req.Batches[j] = wire[i]
		o.tokens += len(wire[i].Positions)
	}
	known, knownHash := c.certs.get(g.holder.Peer)
	if known != nil {
		req.KnownCert = knownHash[:]
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, w, err := Exchange(ctx, c.h, g.holder.Peer, req)
	o.wire = w
	if err != nil {
		o.err = err
		return o
	}
	var filled bool
	if resp.Receipt, filled, err = withCert(resp.Receipt, known); err != nil {
		o.err = err
		return o
	}
	r, err := Verify(c.cache, resp.Receipt, g.holder.Machine, g.holder.Peer, c.cfg.Now())
	if err == nil {
		err = Match(r, req, resp.Outputs)
	}
	if err != nil {
		o.err = err
		return o
	}
	o.rows = make([][][]float32, len(resp.Outputs))
	for j, b := range resp.Outputs {
		if !finite(b) {
			o.err = fmt.Errorf("%w: expert %d returned a value that is not finite", ErrOutputMismatch, req.Batches[j].Expert)
			return o
		}
		if o.rows[j], err = UnpackRows(b, c.cfg.Dim); err != nil {
			o.err = err
			return o
		}
	}
	o.receipt = resp.Receipt
	o.outputs = resp.Outputs
	if !filled {
		// First contact, or the holder renewed its session: keep the
		// certificate it sent for its next receipts.
		if env, _, err := DecodeReceipt(resp.Receipt); err == nil {
			c.certs.put(g.holder.Peer, &env.Cert)
		}
	}
	return o
}

// certStore keeps the last verified session certificate of each holder,
// so its next receipts can travel without it (Request.KnownCert).
type certStore struct {
	mu sync.Mutex
	by map[peer.ID]knownCert
}

type knownCert struct {
	cert *identity.Certificate
	hash [32]byte
}

func (s *certStore) get(p peer.ID) (*identity.Certificate, [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.by[p]
	return k.cert, k.hash
}

func (s *certStore) put(p peer.ID, c *identity.Certificate) {
	h := c.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[peer.ID]knownCert{}
	}
	if len(s.by) >= maxCertsKept {
		clear(s.by) // holders beyond the bound send their certificate again
	}
	s.by[p] = knownCert{cert: c, hash: h}
}

// maxCertsKept bounds the certificates a caller keeps.
const maxCertsKept = 4096

func (c *Caller) fail(o outcome, layer int, t *Tally) {
	c.breaker.failure(o.group.holder.Peer)
	reason := failReason(o.err)
	c.stats.failure(reason)
	c.stats.wire(o.wire)
	t.failed(o.group.holder)
	c.log.Info("expert holder retired for the batch", "holder", o.group.holder.Peer, "layer", layer,
		"batches", len(o.group.idx), "reason", reason, "err", o.err)
}

func (c *Caller) succeed(o outcome, t *Tally) {
	c.breaker.success(o.group.holder.Peer)
	c.stats.exchange(o.tokens)
	c.stats.wire(o.wire)
	t.add(o.group.holder, len(o.group.idx), o.tokens, o.receipt)
}

// Failure reasons, as the metrics count them.
const (
	ReasonTimeout   = "timeout"
	ReasonRefused   = "refused"
	ReasonSigner    = "wrong_signer"
	ReasonSignature = "bad_signature"
	ReasonInput     = "input_mismatch"
	ReasonOutput    = "output_mismatch"
	ReasonMalformed = "malformed"
	ReasonTransport = "transport"
)

func failReason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case errors.Is(err, ErrRefused):
		return ReasonRefused
	case errors.Is(err, ErrWrongSigner):
		return ReasonSigner
	case errors.Is(err, ErrBadSignature):
		return ReasonSignature
	case errors.Is(err, ErrInputMismatch):
		return ReasonInput
	case errors.Is(err, ErrOutputMismatch):
		return ReasonOutput
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrBadReceipt):
		return ReasonMalformed
	}
	return ReasonTransport
}

// breaker counts each holder's consecutive failures at this caller. It
// only orders holders: standing falls only through a dispute verdict, so
// a caller's own network never blames a holder beyond its breaker.
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time

	mu    sync.Mutex
	fails map[peer.ID]int
	until map[peer.ID]time.Time
}

func newBreaker(threshold int, cooldown time.Duration, now func() time.Time) *breaker {
	return &breaker{threshold: threshold, cooldown: cooldown, now: now, fails: map[peer.ID]int{}, until: map[peer.ID]time.Time{}}
}

func (b *breaker) open(p peer.ID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.now().Before(b.until[p])
}

func (b *breaker) failure(p peer.ID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fails[p]++; b.fails[p] >= b.threshold {
		b.until[p] = b.now().Add(b.cooldown)
	}
}

func (b *breaker) success(p peer.ID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.fails, p)
	delete(b.until, p)
}

// Open reports whether p's breaker is open at this caller.
func (c *Caller) Open(p peer.ID) bool { return c.breaker.open(p) }

// Forgive closes p's breaker and clears its failures: the holder restarted
// (a new session), so what failed was its last run, and it is first choice
// again for its experts rather than only after the cooldown.
func (c *Caller) Forgive(p peer.ID) { c.breaker.success(p) }
