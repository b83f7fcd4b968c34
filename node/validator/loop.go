package validator

import (
	"context"
	"sync"
)

// loop is the goroutine a part of the validator runs from Start to Stop.
// Start's ctx may end as soon as starting is done, so the goroutine keeps
// its values but not its cancellation; Stop (promoted to the part) ends it
// and waits for it.
type loop struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (l *loop) start(ctx context.Context, run func(context.Context)) {
	ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		run(ctx)
	}()
}

func (l *loop) Stop(context.Context) error {
	if l.cancel != nil {
		l.cancel()
	}
	l.wg.Wait()
	return nil
}
