package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// A burst of concurrent writers shares fsyncs: every waiter returns once a
// sync that started after its write has finished, with far fewer syncs
// than writes.
func TestFlusherCoalescesSyncs(t *testing.T) {
	var inSync, calls atomic.Int64
	f := newFlusher(func(context.Context) error {
		calls.Add(1)
		inSync.Store(1)
		time.Sleep(2 * time.Millisecond)
		inSync.Store(0)
		return nil
	})
	defer f.close()
	const writers = 64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- f.wait(context.Background(), f.wrote())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n >= writers || n == 0 {
		t.Fatalf("%d syncs for %d writes; want between 1 and %d", n, writers, writers-1)
	}
	if p := f.pending(); p != 0 {
		t.Fatalf("%d writes pending after every waiter returned", p)
	}
}

// A write made while a sync runs is not covered by that sync: its waiter
// needs the next one.
func TestFlusherWriteDuringSyncWaitsForNext(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	f := newFlusher(func(context.Context) error {
		if calls.Add(1) == 1 {
			<-release
		}
		return nil
	})
	defer f.close()
	first := f.wrote()
	for calls.Load() == 0 {
		time.Sleep(100 * time.Microsecond)
	}
	second := f.wrote() // made while sync 1 is blocked
	close(release)
	if err := f.wait(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	if err := f.wait(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	if calls.Load() < 2 {
		t.Fatalf("the second write was reported durable after %d sync(s); it needs a second", calls.Load())
	}
}

// A failed fsync is reported to the writers it should have covered, and
// cleared by the next sync that succeeds.
func TestFlusherReportsSyncError(t *testing.T) {
	boom := errors.New("disk on fire")
	var fail atomic.Bool
	fail.Store(true)
	f := newFlusher(func(context.Context) error {
		if fail.Load() {
			return boom
		}
		return nil
	})
	defer f.close()
	if err := f.wait(context.Background(), f.wrote()); !errors.Is(err, boom) {
		t.Fatalf("wait after a failed sync: %v, want %v", err, boom)
	}
	fail.Store(false)
	n := f.wrote()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f.wait(context.Background(), n)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after the disk recovered: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFlusherWaitHonoursContext(t *testing.T) {
	block := make(chan struct{})
	f := newFlusher(func(context.Context) error { <-block; return nil })
	defer f.close()
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := f.wait(ctx, f.wrote()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait with a stuck disk: %v, want a deadline error", err)
	}
}

// On a real store, a settlement is visible at once and durable after
// WaitDurable; Close syncs the rest, and a reopened store has it all.
func TestGroupSyncSettleThenReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenWith(dir, GroupSync)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Credit("alice", 1000); err != nil {
		t.Fatal(err)
	}
	if u := s.Unsynced(); u != 0 {
		t.Fatalf("a credit returned with %d unsynced writes; credits wait for their fsync", u)
	}
	recs := make([]*receipt.Bill, 5)
	var spent uint64
	for i := range recs {
		recs[i] = payment(t, "alice", i, int64(i), 1, 2)
		if err := s.Settle(recs[i]); err != nil {
			t.Fatal(err)
		}
		spent += recs[i].Price
	}
	if bal, _ := s.Balance("alice"); bal != 1000-spent {
		t.Fatalf("balance %d right after settling, want %d", bal, 1000-spent)
	}
	if err := s.WaitDurable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if u := s.Unsynced(); u != 0 {
		t.Fatalf("%d unsynced writes after WaitDurable", u)
	}
	last := payment(t, "alice", 9, 9, 1, 2)
	if err := s.Settle(last); err != nil {
		t.Fatal(err)
	}
	spent += last.Price
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitDurable(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitDurable after Close: %v, want ErrClosed", err)
	}
	s = openStore(t, dir)
	if bal, _ := s.Balance("alice"); bal != 1000-spent {
		t.Fatalf("balance %d after reopening, want %d", bal, 1000-spent)
	}
	for _, r := range append(recs, last) {
		if _, err := s.GetPayment(r.RequestDigest); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseDurability(t *testing.T) {
	for in, want := range map[string]Durability{"": GroupSync, "group": GroupSync, "each": SyncEach} {
		got, err := ParseDurability(in)
		if err != nil || got != want {
			t.Fatalf("ParseDurability(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "" && got.String() != in {
			t.Fatalf("%v.String() = %q, want %q", got, got.String(), in)
		}
	}
	if _, err := ParseDurability("sometimes"); err == nil {
		t.Fatal("ParseDurability accepted \"sometimes\"")
	}
	if _, err := OpenWith(t.TempDir(), Durability(7)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("OpenWith(7): %v, want ErrInvalid", err)
	}
}

// BenchmarkSettle: one paid request's write, under each durability, from
// one writer and from many at once (where GroupSync shares fsyncs).
//
//	go test -run '^$' -bench Settle ./receipts/store/
func BenchmarkSettle(b *testing.B) {
	for _, dur := range []Durability{GroupSync, SyncEach} {
		for _, par := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", dur, par), func(b *testing.B) {
				s, err := OpenWith(b.TempDir(), dur)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				if err := s.Credit("alice", 1<<62); err != nil {
					b.Fatal(err)
				}
				var n atomic.Int64
				b.SetParallelism(par)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := s.Settle(payment(b, "alice", int(n.Add(1)), 1, 1, 2)); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.StopTimer()
				if err := s.WaitDurable(context.Background()); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// A writer that starts waiting while the sync covering its write is
// already running is released when that sync ends (the hang this guards
// against: waiting for a round no sync would ever close).
func TestFlusherWaiterJoinsRunningSync(t *testing.T) {
	for i := 0; i < 100; i++ {
		entered := make(chan struct{}, 4)
		release := make(chan struct{})
		f := newFlusher(func(context.Context) error {
			entered <- struct{}{}
			<-release
			return nil
		})
		n := f.wrote()
		<-entered // the sync covering write n is running
		done := make(chan error, 1)
		go func() { done <- f.wait(context.Background(), n) }()
		time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
		close(release)
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the waiter was never released", i)
		}
		f.close()
	}
}
