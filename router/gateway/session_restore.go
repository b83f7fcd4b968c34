package gateway

import "fmt"

// Why a restarted gateway did not take a stored session back (the
// streams_stopped label of its stream).
const (
	restoreIdle    = "idle"    // it idled out while the gateway was down
	restoreFull    = "restart" // the table (or its buyer's share) is full, or the record is unusable
	restoreUnknown = "unserved"
)

// RestoreSessions takes back the session table a previous run of this
// gateway stored, so a restart (a crash included) continues each session
// with its primary, successor and standby stream. A session that cannot
// continue (idled out meanwhile, never served, or beyond the table's
// bounds) has its stream stopped at once and its record deleted; the
// successors kept are challenged on the schedule. It returns the
// sessions restored and those ended.
func (g *Gateway) RestoreSessions() (restored, ended int, err error) {
	if g.store == nil {
		return 0, 0, nil
	}
	recs, err := g.store.All()
	if err != nil {
		return 0, 0, fmt.Errorf("gateway: restore sessions: %w", err)
	}
	now := g.clock.Now()
	for id, b := range recs {
		e, err := decodeSession(b)
		if err == nil && e.id != id {
			err = fmt.Errorf("gateway: session record of %q stored as %q", e.id, id)
		}
		if err != nil {
			// Nothing in it can be trusted to name a stream to stop.
			g.log.Warn("session: drop an unreadable stored session", "session", id, "err", err)
			g.forgetStored(id)
			ended++
			continue
		}
		why := ""
		switch {
		case now.Sub(e.lastUse) >= g.sessions.idle:
			why = restoreIdle
		case e.primary == nil:
			why = restoreUnknown
		}
		g.sessions.mu.Lock()
		if _, live := g.sessions.m[id]; live {
			// Restored twice, or begun meanwhile: the live row owns the
			// stream and the record.
			g.sessions.mu.Unlock()
			continue
		}
		if why == "" && (len(g.sessions.m) >= g.sessions.max || g.sessions.perPayer[e.payer] >= g.sessions.maxPayer) {
			why = restoreFull
		}
		if why == "" {
			g.sessions.m[id] = e
			g.sessions.perPayer[e.payer]++
		}
		g.sessions.mu.Unlock()
		if why == "" {
			restored++
			continue
		}
		g.log.Info("session: a stored session does not continue; its standby stream is stopped", "session", id, "why", why)
		g.stopStream(e.successor, why)
		g.forgetStored(id)
		ended++
	}
	g.sessionMetrics.active.Set(float64(g.sessions.len()))
	if restored+ended > 0 {
		g.log.Info("session: table restored", "sessions", restored, "ended", ended)
	}
	return restored, ended, nil
}

func (g *Gateway) forgetStored(id string) {
	g.persistMu.Lock()
	defer g.persistMu.Unlock()
	if err := g.store.Delete(id); err != nil {
		g.log.Warn("session: forget a stored session", "session", id, "err", err)
	}
}

// Persistent reports whether the session table outlives the process.
func (g *Gateway) Persistent() bool { return g.store != nil }
