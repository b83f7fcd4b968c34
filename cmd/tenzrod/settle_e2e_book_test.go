package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// buyerBook is what the buyer holds: every signed record a response
// carried, by request digest, and the calls that failed, by kind.
type buyerBook struct {
	mu    sync.Mutex
	recs  map[string]signedRecord
	twice []string
	fails map[string]int    // by phase and kind
	why   map[string]string // one message of each
	phase string
	ok    int

	hold     atomic.Bool  // callers wait while set
	inFlight atomic.Int32 // callers' calls under way
}

func newBuyerBook() *buyerBook {
	return &buyerBook{recs: map[string]signedRecord{}, fails: map[string]int{}, why: map[string]string{}}
}

func (b *buyerBook) note(r *signedRecord, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		k := b.phase + ": " + failureKind(err)
		b.fails[k]++
		if _, ok := b.why[k]; !ok {
			b.why[k] = err.Error()
		}
		return
	}
	if _, seen := b.recs[r.RequestDigest]; seen {
		b.twice = append(b.twice, r.RequestDigest)
	}
	b.recs[r.RequestDigest] = *r
	b.ok++
}

func (b *buyerBook) setPhase(p string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.phase = p
}

func (b *buyerBook) successes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ok
}

// callers runs n goroutines making paid calls through api until stop is
// called, alternating stream and non-stream.
func callers(api, token, model string, n int, b *buyerBook) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for c := range n {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				if b.hold.Load() {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				b.inFlight.Add(1)
				r, err := paidChat(ctx, api, token, model, chatOpts{stream: (i+c)%2 == 0, n: c*1_000_000 + i})
				if ctx.Err() != nil && err != nil {
					return // stopped mid-call: not a failure of the system
				}
				b.inFlight.Add(-1)
				b.note(r, err)
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// waitCalls waits until the buyer holds more successful calls than now.
func waitCalls(t *testing.T, b *buyerBook, more int, what string) time.Duration {
	t.Helper()
	base := b.successes()
	return waitFor(t, 60*time.Second, what, func() bool { return b.successes() >= base+more })
}

// logFailures logs the calls the buyer saw fail, one message of each kind,
// and fails the test if the buyer was shown a record twice. The caller
// holds b.mu.
func (b *buyerBook) logFailures(t *testing.T) {
	t.Helper()
	for k, msg := range b.why {
		t.Logf("  %s, e.g.: %.300s", k, msg)
	}
	if len(b.twice) > 0 {
		t.Errorf("records shown to the buyer twice (the same request digest): %v", b.twice)
	}
}
