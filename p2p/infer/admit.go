package infer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// admitter hands out the server's handler slots fairly across peers.
//
// A request takes a free slot at once when nobody waits; otherwise it
// waits in its peer's FIFO queue. A freed slot goes to the waiting peer
// that holds the fewest slots (ties: the one served longest ago), so a peer
// with many waiting requests cannot starve another peer's single one. A
// peer holds at most maxPerPeer requests (served and waiting); when the
// queue is full, a newcomer displaces the newest waiter of the peer holding
// the most, if that peer holds more than the newcomer would. Callers that
// are not known share one global budget (unknownConcurrency requests at
// once, unknownRate per minute), so minting fresh peer IDs buys nothing.
type admitter struct {
	slots, maxPerPeer, maxQueue int
	queueTimeout, retryAfter    time.Duration
	unknownConcurrency          int

	mu      sync.Mutex
	free    int
	peers   map[peer.ID]*peerLoad
	waiting int
	seq     uint64 // counts grants, to order peers by their last one
	unknown int    // unknown callers admitted (served or waiting)
	bucket  tokenBucket
}

type peerLoad struct {
	active int
	queue  []*waiter
	served uint64 // admitter.seq at this peer's last grant; 0: never
}

func (l *peerLoad) load() int { return l.active + len(l.queue) }

type waiter struct {
	done chan struct{} // closed when granted or displaced
	// granted or displaced, set under admitter.mu before done is closed.
	granted, displaced bool
}

func newAdmitter(cfg ServerConfig) *admitter {
	return &admitter{
		slots: cfg.MaxConcurrent, maxPerPeer: cfg.MaxPerPeer, maxQueue: cfg.MaxQueue,
		queueTimeout: cfg.QueueTimeout, retryAfter: cfg.RetryAfter, unknownConcurrency: cfg.UnknownConcurrency,
		free: cfg.MaxConcurrent, peers: map[peer.ID]*peerLoad{},
		bucket: newTokenBucket(cfg.Clock, cfg.UnknownRate, time.Minute),
	}
}

// busy is the answer of a provider at capacity.
func (a *admitter) busy(why string) *ErrorFrame {
	return &ErrorFrame{Status: 429, Code: terms.CodeBusy, Message: why, RetryAfterMs: a.retryAfter.Milliseconds(), Retryable: true}
}

// acquire waits for a slot for p (at most queueTimeout, or until ctx ends
// or abort is closed) and returns its release; an *ErrorFrame says why
// there is none.
func (a *admitter) acquire(ctx context.Context, abort <-chan struct{}, p peer.ID, known bool) (release func(), _ *ErrorFrame) {
	a.mu.Lock()
	if !known {
		if a.unknown >= a.unknownConcurrency {
			a.mu.Unlock()
			return nil, &ErrorFrame{Status: 429, Code: terms.CodeRateLimited, Retryable: true, RetryAfterMs: a.retryAfter.Milliseconds(),
				Message: fmt.Sprintf("unregistered callers are limited to %d request(s) at once", a.unknownConcurrency)}
		}
		if wait, ok := a.bucket.take(); !ok {
			a.mu.Unlock()
			return nil, &ErrorFrame{Status: 429, Code: terms.CodeRateLimited, Retryable: true, RetryAfterMs: max(wait.Milliseconds(), 1),
				Message: "unregistered callers' request budget is spent"}
		}
		a.unknown++
	}
	ef := a.enter(p)
	var w *waiter
	if ef == nil && a.free > 0 && a.waiting == 0 {
		a.free--
		a.grant(a.peers[p])
	} else if ef == nil {
		w, ef = a.enqueue(p)
	}
	if ef != nil {
		a.leave(p, known)
		a.mu.Unlock()
		return nil, ef
	}
	a.mu.Unlock()
	release = func() { a.release(p, known) }
	if w == nil {
		return release, nil
	}
	t := time.NewTimer(a.queueTimeout)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	case <-ctx.Done():
	case <-abort:
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case w.granted:
		return release, nil
	case w.displaced:
		a.leave(p, known)
		return nil, a.busy("provider at capacity; request displaced by another caller's")
	}
	a.dequeue(p, w)
	a.leave(p, known)
	return nil, a.busy(fmt.Sprintf("provider at capacity; no slot within %s", a.queueTimeout))
}

// enter checks p's share and registers p; under mu.
func (a *admitter) enter(p peer.ID) *ErrorFrame {
	l := a.peers[p]
	if l == nil {
		l = &peerLoad{}
		a.peers[p] = l
	}
	if l.load() >= a.maxPerPeer {
		return a.busy(fmt.Sprintf("at most %d requests per caller at once", a.maxPerPeer))
	}
	return nil
}

// leave undoes enter (and the unknown budget) for a request that got no
// slot; under mu.
func (a *admitter) leave(p peer.ID, known bool) {
	if l := a.peers[p]; l != nil && l.load() == 0 {
		delete(a.peers, p)
	}
	if !known {
		a.unknown--
	}
}

// enqueue queues a waiter for p, displacing another peer's if the queue
// is full; under mu.
func (a *admitter) enqueue(p peer.ID) (*waiter, *ErrorFrame) {
	l := a.peers[p]
	if a.waiting >= a.maxQueue {
		var victim *peerLoad
		for _, o := range a.peers {
			if len(o.queue) > 0 && o.load() > l.load()+1 && (victim == nil || o.load() > victim.load()) {
				victim = o
			}
		}
		if victim == nil {
			return nil, a.busy("provider at capacity; queue full")
		}
		v := victim.queue[len(victim.queue)-1]
		victim.queue = victim.queue[:len(victim.queue)-1]
		a.waiting--
		v.displaced = true
		close(v.done)
	}
	w := &waiter{done: make(chan struct{})}
	l.queue = append(l.queue, w)
	a.waiting++
	return w, nil
}

// dequeue removes w from p's queue after a timeout; under mu.
func (a *admitter) dequeue(p peer.ID, w *waiter) {
	l := a.peers[p]
	for i, q := range l.queue {
		if q == w {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			a.waiting--
			return
		}
	}
}

// release frees p's slot and hands it to the fairest waiter.
func (a *admitter) release(p peer.ID, known bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.peers[p]
	l.active--
	if l.load() == 0 {
		delete(a.peers, p)
	}
	if !known {
		a.unknown--
	}
	var next *peerLoad
	for _, o := range a.peers {
		if len(o.queue) == 0 {
			continue
		}
		if next == nil || o.active < next.active || (o.active == next.active && o.served < next.served) {
			next = o
		}
	}
	if next == nil {
		a.free++
		return
	}
	w := next.queue[0]
	next.queue = next.queue[1:]
	a.waiting--
	a.grant(next)
	w.granted = true
	close(w.done)
}

// grant gives l one slot; under mu.
func (a *admitter) grant(l *peerLoad) {
	a.seq++
	l.active++
	l.served = a.seq
}

// tokenBucket is a rate limit of n per period with a burst of n, on an
// injectable clock. Credit is kept as time, so the arithmetic is exact.
type tokenBucket struct {
	clock    clock.Clock
	interval time.Duration // time per token
	burst    time.Duration // credit cap
	credit   time.Duration
	last     time.Time
}

func newTokenBucket(clk clock.Clock, n int, period time.Duration) tokenBucket {
	interval := period / time.Duration(n)
	return tokenBucket{clock: clk, interval: interval, burst: interval * time.Duration(n), credit: interval * time.Duration(n), last: clk.Now()}
}

// take spends one token, or reports how long until one is available.
func (b *tokenBucket) take() (wait time.Duration, ok bool) {
	now := b.clock.Now()
	if d := now.Sub(b.last); d > 0 {
		b.credit = min(b.burst, b.credit+d)
	}
	b.last = now
	if b.credit < b.interval {
		return b.interval - b.credit, false
	}
	b.credit -= b.interval
	return 0, true
}
