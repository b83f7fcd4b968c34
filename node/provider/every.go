package provider

import (
	"context"
	"time"

	"github.com/filecoin-project/go-clock"
)

// every calls f each interval of clk until ctx ends; the provider's
// periodic duties (stream claims, expert disputes) share it so that each
// stops the same way when the node does.
func every(ctx context.Context, clk clock.Clock, interval time.Duration, f func(context.Context)) {
	t := clk.Ticker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(ctx)
		}
	}
}
