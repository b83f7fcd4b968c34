package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
)

// sessionSweepEvery is how often idle sessions are ended (their standby
// streams stopped) when no turn arrives to sweep them.
const sessionSweepEvery = 30 * time.Second

// SessionSweeper gives the gateway's session table a periodic sweep with
// the node's lifecycle.
type SessionSweeper struct {
	gw    *Gateway
	clock clock.Clock

	stop chan struct{}
	wg   sync.WaitGroup
}

// NewSessionSweeper sweeps gw's sessions on clk's ticks.
func NewSessionSweeper(gw *Gateway, clk clock.Clock) *SessionSweeper {
	return &SessionSweeper{gw: gw, clock: clk}
}

// Start begins the sweeps.
func (s *SessionSweeper) Start(context.Context) error {
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

// Stop ends the sweeps and every session, stopping their standby streams
// within sessionStopBound (the chain, started before, still runs).
func (s *SessionSweeper) Stop(ctx context.Context) error {
	if s.stop != nil {
		close(s.stop)
		s.wg.Wait()
		s.stop = nil
	}
	ctx, cancel := context.WithTimeout(ctx, sessionStopBound)
	defer cancel()
	s.gw.EndSessions(ctx)
	return nil
}

// sessionStopBound bounds how long a stopping node spends stopping
// standby streams: a stop needs a block, and a devnet or host shutting
// down stops its validators at the same time, so a longer wait would only
// hold the gateway's exit (the devnet's supervisor kills a child after
// 10 s). A stream left open runs out its deposit, one standby horizon at
// most.
const sessionStopBound = 3 * time.Second
