package provider

import (
	"context"
	"time"
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
			s.onState(r.A, r.State)
		}
	}
	if len(rs) > 0 {
		s.p.d.Log.Info("provider: held sessions restored", "sessions", s.hold.Len())
	}
}
