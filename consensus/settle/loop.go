package settle

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
)

// ErrStarted is a second Start.
var ErrStarted = errors.New("settle: already started")

// loop runs one component's background work: a main goroutine and the
// helpers it spawns (wg). Stop lets the work in flight finish (a
// submitted transaction gets marked) but starts nothing new; halt cancels
// the work in flight too.
type loop struct {
	mu      sync.Mutex
	started bool
	quit    chan struct{}      // closed by stop: start nothing new
	cancel  context.CancelFunc // cancels the work in flight
	wg      sync.WaitGroup     // the main goroutine and its helpers
}

// ticking is a loop body that runs pass every interval, or at once when
// kick fires, until quit or ctx ends.
func ticking(clk clock.Clock, interval time.Duration, kick <-chan struct{}, pass func(ctx context.Context)) func(ctx context.Context, quit <-chan struct{}) {
	return func(ctx context.Context, quit <-chan struct{}) {
		t := clk.Ticker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			case <-kick:
			}
			if stopping(ctx, quit) {
				return
			}
			pass(ctx)
		}
	}
}

// start runs body(ctx, quit) in a goroutine.
func (l *loop) start(body func(ctx context.Context, quit <-chan struct{})) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return ErrStarted
	}
	l.started = true
	ctx, cancel := context.WithCancel(context.Background())
	quit := make(chan struct{})
	l.quit, l.cancel = quit, cancel
	l.wg.Go(func() { body(ctx, quit) })
	return nil
}

// spawn runs f as a helper the loop's stop waits for.
func (l *loop) spawn(f func()) { l.wg.Go(f) }

// stop asks the loop to finish and waits for it; when ctx ends first, the
// work in flight is cancelled and waited for.
func (l *loop) stop(ctx context.Context) error {
	l.mu.Lock()
	quit, cancel := l.quit, l.cancel
	l.quit = nil
	l.mu.Unlock()
	if quit == nil {
		return nil
	}
	close(quit)
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		cancel()
		return nil
	case <-ctx.Done():
		cancel()
		<-done
		return ctx.Err()
	}
}

// halt cancels everything at once and waits: the hard stop a crash is.
func (l *loop) halt() {
	l.mu.Lock()
	quit, cancel := l.quit, l.cancel
	l.quit = nil
	l.mu.Unlock()
	if quit == nil {
		return
	}
	cancel()
	close(quit)
	l.wg.Wait()
}

// backoff is an exponential retry delay.
type backoff struct {
	next  time.Time     // no attempt before
	delay time.Duration // the delay after the next failure
}

// fail pushes the next attempt out by the current delay and doubles it,
// from base up to max.
func (b *backoff) fail(now time.Time, base, hi time.Duration) {
	b.delay = min(hi, max(base, b.delay))
	b.next = now.Add(b.delay)
	b.delay = min(hi, 2*b.delay)
}

func (b *backoff) reset() { *b = backoff{} }

func (b *backoff) ready(now time.Time) bool { return !now.Before(b.next) }

// stopping reports whether the loop was asked to end: select picks among
// ready cases at random, so a tick may win over a closed quit.
func stopping(ctx context.Context, quit <-chan struct{}) bool {
	select {
	case <-quit:
		return true
	default:
		return ctx.Err() != nil
	}
}

// DefaultRetention keeps final records a week.
const DefaultRetention = 7 * 24 * time.Hour

// Pruning runs at most once per pruneEvery and deletes at most pruneLimit
// records a run, so one run never holds the store for long.
const (
	pruneEvery = time.Hour
	pruneLimit = 10_000
)

// pruner deletes final records older than the retention.
type pruner struct {
	last time.Time
}

func (p *pruner) maybe(ctx context.Context, b *book, clk clock.Clock, retention time.Duration, log *slog.Logger) {
	now := clk.Now()
	if !p.last.IsZero() && now.Sub(p.last) < pruneEvery {
		return
	}
	n, err := b.prune(ctx, now.Add(-retention).UnixNano(), pruneLimit)
	if err != nil {
		log.Warn("settle: pruning old records", "err", err)
		return
	}
	if n < pruneLimit {
		p.last = now // done for now; a full run goes again at the next tick
	}
	if n > 0 {
		log.Info("settle: pruned final records past retention", "records", n, "retention", retention)
	}
}
