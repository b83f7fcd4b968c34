package node

import (
	"context"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/router/gateway"
)

// sessionSweepEvery is how often idle sessions are ended (their standby
// streams stopped) when no turn arrives to sweep them.
const sessionSweepEvery = 30 * time.Second

// sessionSweeper gives the gateway's session table a periodic sweep with
// the node's lifecycle.
type sessionSweeper struct {
	gw    *gateway.Gateway
	clock clock.Clock

	stop chan struct{}
	wg   sync.WaitGroup
}

func newSessionSweeper(gw *gateway.Gateway, clk clock.Clock) *sessionSweeper {
	return &sessionSweeper{gw: gw, clock: clk}
}

func (s *sessionSweeper) Start(context.Context) error {
	s.stop = make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := s.clock.Ticker(sessionSweepEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.gw.SweepSessions()
			case <-s.stop:
				return
			}
		}
	}()
	return nil
}

func (s *sessionSweeper) Stop(context.Context) error {
	if s.stop != nil {
		close(s.stop)
		s.wg.Wait()
		s.stop = nil
	}
	return nil
}
