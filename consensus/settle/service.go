package settle

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/filecoin-project/go-clock"
)

// service is what a collector and an outbox share: the store of their
// records, the background loop that works on it, and how the loop is
// started, woken and stopped. Embedded, it gives both their Start, Stop
// and Close.
type service struct {
	b    *book
	loop loop
	kick chan struct{}
	// work is one round of the component's background work, run each
	// tick or when nudged.
	work func(ctx context.Context)
	// Each round is followed by pruning the final records older than
	// retention.
	clk       clock.Clock
	interval  time.Duration
	retention time.Duration
	log       *slog.Logger
}

// openService opens (creating) the store in dir, onPending keeping the
// component's sums as records come and go, for a component that runs
// work every interval of clk.
func openService(dir string, onPending func(*Entry, bool) error, clk clock.Clock, interval, retention time.Duration, log *slog.Logger, work func(ctx context.Context)) (service, error) {
	b, err := openBook(context.Background(), dir, onPending)
	if err != nil {
		return service{}, err
	}
	return service{b: b, kick: make(chan struct{}, 1), work: work, clk: clk, interval: interval, retention: retention, log: log}, nil
}

// Start runs the background loop.
func (s *service) Start(context.Context) error {
	var prune pruner
	return s.loop.start(ticking(s.clk, s.interval, s.kick, func(ctx context.Context) {
		s.work(ctx)
		prune.maybe(ctx, s.b, s.clk, s.retention, s.log)
	}))
}

// Stop lets the work in flight finish and its outcomes be stored (until
// ctx ends), stops the loop and closes the store.
func (s *service) Stop(ctx context.Context) error {
	err := s.loop.stop(ctx)
	return errors.Join(err, s.b.close())
}

// Close stops at once, cancelling the work in flight, and closes the
// store: what a crash leaves is exactly what is on disk.
func (s *service) Close() error {
	s.loop.halt()
	return s.b.close()
}

// nudge wakes the loop: the work is due now rather than at the next tick.
func (s *service) nudge() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
