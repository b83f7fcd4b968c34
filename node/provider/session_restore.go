package provider

import (
	"context"
	"time"

	"github.com/tenzrod/tenzrod/p2p/sessioncache"
)

// restoreFundTimeout bounds re-reading one held session's stream at start.
const restoreFundTimeout = 10 * time.Second

// restore takes back the sessions held before a restart: each only while
// its standby stream still pays (on a chain; a stopped one means the
// gateway replaced this node meanwhile), and each state is pre-filled
// again so the successor stands warm as it did.
func (s *sessions) restore() {
	rs, err := s.hold.Restore()
	if err != nil {
		s.p.d.Log.Warn("provider: restore held sessions", "err", err)
		return
	}
	for _, r := range rs {
		if s.pay != nil {
			ctx, cancel := context.WithTimeout(s.ctx, restoreFundTimeout)
			err := s.pay.fund(ctx, r.Gateway, r.A)
			cancel()
			if err != nil {
				s.p.d.Log.Info("provider: a held session's standby no longer pays; forgotten", "session", r.A.SessionID, "err", err)
				s.hold.Forget(r.A.SessionID)
				continue
			}
		}
		if r.State != nil {
			s.warmWhenReady(r.State)
		}
	}
	if len(rs) > 0 {
		s.p.d.Log.Info("provider: held sessions restored", "sessions", s.hold.Len())
	}
}

// restoreWarmPoll spaces the looks at whether a restored state's model is
// warm yet.
const restoreWarmPoll = 250 * time.Millisecond

// warmWhenReady pre-fills a restored state once its model is warm (a
// restart loads the model after the sessions are restored); meanwhile
// the session reads as warming, not warm.
func (s *sessions) warmWhenReady(st *sessioncache.State) {
	id := st.SessionID
	pending := make(chan struct{})
	s.mu.Lock()
	s.warming[id] = pending
	s.mu.Unlock()
	release := func() {
		s.mu.Lock()
		if s.warming[id] == pending {
			delete(s.warming, id)
		}
		s.mu.Unlock()
		close(pending)
	}
	started := s.spawn(func() {
		t := s.p.d.Clock.Ticker(restoreWarmPoll)
		defer t.Stop()
		for s.prefiller(st.ModelID) == nil {
			select {
			case <-t.C:
			case <-s.ctx.Done():
				release()
				return
			}
		}
		// A newer state that came meanwhile is pre-filled by its own
		// arrival; this older one would cut the cache back.
		if _, cur, ok := s.hold.Get(id); ok && cur != nil && cur.Turn == st.Turn {
			s.warm(id, st.ModelID, st.Ints())
		}
		release()
	})
	if !started {
		release()
	}
}
