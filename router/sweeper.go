package router

import (
	"context"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
)

// Sweeper sweeps a table on a clock's ticks between Start and Stop, so
// provider status transitions are logged as they happen rather than at
// the next read.
type Sweeper struct {
	t     *Table
	clock clock.Clock
	every time.Duration

	stop chan struct{}
	wg   sync.WaitGroup
}

// NewSweeper sweeps t every interval of clk.
func NewSweeper(t *Table, clk clock.Clock, every time.Duration) *Sweeper {
	return &Sweeper{t: t, clock: clk, every: every}
}

// Start begins the sweeps.
func (s *Sweeper) Start(context.Context) error {
	s.stop = make(chan struct{})
	tick := s.clock.Ticker(s.every)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				s.t.Sweep()
			}
		}
	}()
	return nil
}

// Stop ends the sweeps and waits for the one running.
func (s *Sweeper) Stop(context.Context) error {
	if s.stop != nil {
		close(s.stop)
		s.wg.Wait()
		s.stop = nil
	}
	return nil
}
