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

// Start takes back the stored session table, then begins the sweeps and
// the successors' challenges: every challenge_interval all of them, and
// every lapseCheckEvery those whose heartbeats lapsed.
func (s *SessionSweeper) Start(context.Context) error {
	if _, _, err := s.gw.RestoreSessions(); err != nil {
		s.gw.log.Warn("session: restore the table", "err", err)
	}
	s.stop = make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := s.clock.Ticker(sessionSweepEvery)
		defer t.Stop()
		ch := s.clock.Ticker(s.gw.cfg.Sessions.ChallengeInterval)
		defer ch.Stop()
		lapse := s.clock.Ticker(lapseCheckEvery)
		defer lapse.Stop()
		for {
			select {
			case <-t.C:
				s.gw.SweepSessions()
			case <-ch.C:
				s.gw.CheckSuccessors(true, nil)
			case <-lapse.C:
				s.gw.CheckSuccessors(false, nil)
			case <-s.stop:
				return
			}
		}
	}()
	return nil
}

// lapseCheckEvery is how often successors' heartbeats are looked at: a
// look costs a table read, a challenge follows only a lapse.
const lapseCheckEvery = time.Second

// Stop ends the sweeps. Without a session store it ends every session,
// stopping their standby streams within sessionStopBound (the chain,
// started before, still runs); with one, the sessions and their streams
// stay, stored, for the restarted gateway to continue.
func (s *SessionSweeper) Stop(ctx context.Context) error {
	if s.stop != nil {
		close(s.stop)
		s.wg.Wait()
		s.stop = nil
	}
	if s.gw.Persistent() {
		return nil
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
