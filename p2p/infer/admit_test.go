package infer

import (
	"context"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

func testAdmitter(slots, perPeer, queue int) (*admitter, *clock.Mock) {
	clk := clock.NewMock()
	cfg := ServerConfig{MaxConcurrent: slots, MaxPerPeer: perPeer, MaxQueue: queue, QueueTimeout: 10 * time.Second, Clock: clk, UnknownRate: 3}
	return newAdmitter(cfg.withDefaults()), clk
}

type grant struct {
	peer    peer.ID
	release func()
	ef      *ErrorFrame
}

// queue starts an acquire for p that blocks in the queue, and waits until
// it is queued.
func (a *admitter) queueFor(t *testing.T, p peer.ID, out chan<- grant) {
	t.Helper()
	a.mu.Lock()
	before := a.waiting
	a.mu.Unlock()
	go func() {
		rel, ef := a.acquire(context.Background(), nil, p, true)
		out <- grant{p, rel, ef}
	}()
	for deadline := time.Now().Add(5 * time.Second); ; {
		a.mu.Lock()
		n := a.waiting
		a.mu.Unlock()
		if n > before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("request not queued")
		}
		time.Sleep(time.Millisecond)
	}
}

func mustAcquire(t *testing.T, a *admitter, p peer.ID, known bool) func() {
	t.Helper()
	rel, ef := a.acquire(context.Background(), nil, p, known)
	if ef != nil {
		t.Fatalf("acquire for %s: %v", p, ef)
	}
	return rel
}

// TestFairQueue: a freed slot goes to the waiting peer holding fewest
// slots, not to the peer with the most (or the earliest) waiters.
func TestFairQueue(t *testing.T) {
	a, _ := testAdmitter(1, 10, 10)
	relA := mustAcquire(t, a, "A", true)
	got := make(chan grant, 8)
	for range 3 {
		a.queueFor(t, "A", got)
	}
	a.queueFor(t, "B", got)
	relA()
	g := <-got
	if g.peer != "B" || g.ef != nil {
		t.Fatalf("slot went to %s (%v), want B", g.peer, g.ef)
	}
	g.release()
	for range 3 {
		if g := <-got; g.peer != "A" || g.ef != nil {
			t.Fatalf("then %s (%v), want A", g.peer, g.ef)
		} else {
			g.release()
		}
	}
	if a.free != 1 || len(a.peers) != 0 || a.waiting != 0 {
		t.Fatalf("state not restored: free %d peers %d waiting %d", a.free, len(a.peers), a.waiting)
	}
}

// TestQueueDisplacement: with the queue full of one peer's requests,
// another peer's request displaces the newest of them instead of being
// refused; a peer's share is capped.
func TestQueueDisplacement(t *testing.T) {
	a, _ := testAdmitter(1, 4, 2)
	relA := mustAcquire(t, a, "A", true)
	got := make(chan grant, 8)
	a.queueFor(t, "A", got)
	a.queueFor(t, "A", got)
	if _, ef := a.acquire(context.Background(), nil, "A", true); ef == nil || ef.Code != terms.CodeBusy {
		t.Fatalf("A over a full queue: %v, want busy", ef)
	}
	go func() {
		rel, ef := a.acquire(context.Background(), nil, "B", true)
		got <- grant{"B", rel, ef}
	}()
	if g := <-got; g.peer != "A" || g.ef == nil || g.ef.Code != terms.CodeBusy || g.ef.Status != 429 {
		t.Fatalf("displaced: %s %+v, want A busy", g.peer, g.ef)
	}
	relA()
	g := <-got
	if g.peer != "B" || g.ef != nil {
		t.Fatalf("slot went to %s (%v), want B", g.peer, g.ef)
	}
	g.release()
	(<-got).release()

	b, _ := testAdmitter(4, 2, 4)
	mustAcquire(t, b, "C", true)
	mustAcquire(t, b, "C", true)
	if _, ef := b.acquire(context.Background(), nil, "C", true); ef == nil || ef.Code != terms.CodeBusy {
		t.Fatalf("third request of C with MaxPerPeer 2: %v, want busy", ef)
	}
}

// TestUnknownBudget: callers that are not known share one budget of
// concurrency and rate, whatever their peer IDs.
func TestUnknownBudget(t *testing.T) {
	a, clk := testAdmitter(8, 8, 8)
	rel := mustAcquire(t, a, "u1", false)
	if _, ef := a.acquire(context.Background(), nil, "u2", false); ef == nil || ef.Code != terms.CodeRateLimited || ef.Status != 429 {
		t.Fatalf("second unknown caller at once: %v, want rate_limited", ef)
	}
	mustAcquire(t, a, "known", true) // known callers are not in the budget
	rel()
	mustAcquire(t, a, "u3", false)()
	mustAcquire(t, a, "u4", false)()
	_, ef := a.acquire(context.Background(), nil, "u5", false) // 3 per minute spent
	if ef == nil || ef.Code != terms.CodeRateLimited || ef.RetryAfterMs != 20_000 {
		t.Fatalf("fourth unknown call within a minute: %+v, want rate_limited after 20 s", ef)
	}
	clk.Add(20 * time.Second)
	mustAcquire(t, a, "u6", false)()
	if _, ef := a.acquire(context.Background(), nil, "u7", false); ef == nil {
		t.Fatal("budget refilled beyond its rate")
	}
}

func TestTokenBucket(t *testing.T) {
	clk := clock.NewMock()
	b := newTokenBucket(clk, 6, time.Minute)
	for i := range 6 {
		if _, ok := b.take(); !ok {
			t.Fatalf("burst token %d refused", i)
		}
	}
	if wait, ok := b.take(); ok || wait != 10*time.Second {
		t.Fatalf("empty bucket: ok %v wait %s", ok, wait)
	}
	clk.Add(time.Hour) // credit caps at the burst
	n := 0
	for ; ; n++ {
		if _, ok := b.take(); !ok {
			break
		}
	}
	if n != 6 {
		t.Fatalf("%d tokens after an hour, want the burst of 6", n)
	}
}
