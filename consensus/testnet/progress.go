package testnet

import (
	"context"
	"fmt"
	"time"
)

// ErrStalled is the cause of a Progress context that ended because the
// network committed no block for its stall window.
var ErrStalled = fmt.Errorf("testnet: no block committed")

// Progress returns a context that ends when ctx does or when no running
// node commits a new block for stall. A test that bounds itself by
// Progress rather than a wall-clock deadline survives a loaded machine,
// where every step is slower but the chain still moves, and still fails
// at once on a chain that stopped. The caller's cancel releases the
// watcher.
func (n *Net) Progress(ctx context.Context, stall time.Duration) (context.Context, context.CancelFunc) {
	return Progress(ctx, n.MaxHeight, stall)
}

// Progress ends the returned context when height() has not grown for
// stall; height is read every stall/20 (at least every 10 ms), from the
// watcher's goroutine until the returned cancel returns.
func Progress(ctx context.Context, height func() int64, stall time.Duration) (context.Context, context.CancelFunc) {
	pctx, cancel := context.WithCancelCause(ctx)
	tick := max(stall/20, 10*time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		last, since := height(), time.Now()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			}
			if h := height(); h != last {
				last, since = h, time.Now()
				continue
			}
			if time.Since(since) >= stall {
				cancel(fmt.Errorf("%w for %v (height %d)", ErrStalled, stall, last))
				return
			}
		}
	}()
	// The returned cancel waits for the watcher to stop reading height, so
	// a caller may stop the network right after it.
	return pctx, func() { cancel(context.Canceled); <-done }
}
