package testnet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestProgress: a context bounded by progress lives as long as the height
// grows, however long that is, and ends with ErrStalled once it stops.
func TestProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h atomic.Int64
		ctx, cancel := Progress(context.Background(), h.Load, time.Second)
		defer cancel()
		start := time.Now()
		for range 100 { // 50 s of blocks every 500 ms: well past the stall window
			time.Sleep(500 * time.Millisecond)
			h.Add(1)
			if ctx.Err() != nil {
				t.Fatalf("ended after %v while the height grew: %v", time.Since(start), context.Cause(ctx))
			}
		}
		stopped := time.Now()
		<-ctx.Done()
		if waited := time.Since(stopped); waited < time.Second || waited > 2*time.Second {
			t.Fatalf("ended %v after the last block, want about the 1 s stall window", waited)
		}
		if !errors.Is(context.Cause(ctx), ErrStalled) {
			t.Fatalf("cause %v, want ErrStalled", context.Cause(ctx))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := Progress(context.Background(), func() int64 { return 7 }, time.Second)
		cancel()
		<-ctx.Done()
		if errors.Is(context.Cause(ctx), ErrStalled) {
			t.Fatal("a cancelled context reports a stall")
		}
	})
}
