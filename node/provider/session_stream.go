package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// standbyPay holds sessions only against funded standby streams (on a
// chain) and claims what they accrue, in the background.
type standbyPay struct {
	p  *Provider
	mu sync.Mutex
	// streams are the open streams of the sessions held, by stream ID.
	streams map[terms.Hash32]string
}

func newStandbyPay(p *Provider) *standbyPay {
	return &standbyPay{p: p, streams: map[terms.Hash32]string{}}
}

// fund accepts assignment a only when its stream, read from the chain, is
// open, pays this machine's operator from the session's payer at least the
// announced fee, and holds something.
func (s *standbyPay) fund(ctx context.Context, _ peer.ID, a sessioncache.Assignment) error {
	if len(a.StreamID) != len(terms.Hash32{}) {
		return errors.New("provider: a chain's successor stands by only against a standby stream")
	}
	id := terms.Hash32(a.StreamID)
	if err := s.awaitHeight(ctx, a.StreamHeight); err != nil {
		return fmt.Errorf("provider: stream %s committed at height %d: %w", id, a.StreamHeight, err)
	}
	st, ok, err := s.p.d.Chain.Stream(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("provider: read stream %s: %w", id, err)
	case !ok:
		return fmt.Errorf("provider: stream %s does not exist", id)
	case st.Closed:
		return fmt.Errorf("provider: stream %s is closed", id)
	case st.Payee != s.p.d.Identity.MachineID():
		return fmt.Errorf("provider: stream %s pays machine %s, not this one", id, st.Payee)
	case terms.AccountID(a.Payer) != st.Payer:
		return fmt.Errorf("provider: stream %s is paid by %s, not the session's payer", id, st.Payer)
	case st.Rate < s.p.cfg.Standby.FeePerHour:
		return fmt.Errorf("provider: stream %s pays %d an hour, below the standby fee %d", id, st.Rate, s.p.cfg.Standby.FeePerHour)
	case st.Balance() == 0:
		return fmt.Errorf("provider: stream %s holds nothing", id)
	}
	s.mu.Lock()
	s.streams[id] = a.SessionID
	s.mu.Unlock()
	return nil
}

// awaitHeight waits until this node's copy of the chain has the block at
// height h: a follower trails the gateway's node by a block or more, and
// under load by several. It waits at most behindWait in one exchange,
// then answers ErrBehind (a retry), so the gateway asks again for as long
// as it allows instead of the exchange running into its stream deadline.
func (s *standbyPay) awaitHeight(ctx context.Context, h int64) error {
	app := s.p.d.Chain.App()
	give := s.p.d.Clock.After(behindWait)
	for app.Height() < h {
		select {
		case <-s.p.d.Clock.After(heightPoll):
		case <-give:
			return fmt.Errorf("%w: at height %d", sessioncache.ErrBehind, app.Height())
		case <-ctx.Done():
			return fmt.Errorf("%w: at height %d: %w", sessioncache.ErrBehind, app.Height(), ctx.Err())
		}
	}
	return nil
}

// heightPoll is how often awaitHeight reads the height (a fraction of a
// block; a read is a lock and a load); behindWait is well inside an
// exchange's deadline.
const (
	heightPoll = 50 * time.Millisecond
	behindWait = 3 * time.Second
)

// run claims every held stream's accrual each interval until ctx ends.
func (s *standbyPay) run(ctx context.Context, interval time.Duration) {
	every(ctx, s.p.d.Clock, interval, s.claimAll)
}

// claimAll submits a StreamClaim for each stream with something accrued
// and unclaimed; a closed or emptied stream is dropped (and its session
// forgotten: nobody pays for it any more).
func (s *standbyPay) claimAll(ctx context.Context) {
	s.mu.Lock()
	ids := make(map[terms.Hash32]string, len(s.streams))
	for id, sid := range s.streams {
		ids[id] = sid
	}
	s.mu.Unlock()
	now := s.p.d.Clock.Now().Unix()
	for id, sid := range ids {
		st, ok, err := s.p.d.Chain.Stream(ctx, id)
		if err != nil {
			s.p.d.Log.Debug("read standby stream", "stream", id, "err", err)
			continue
		}
		if !ok || st.Closed || st.Balance() == 0 {
			s.drop(id, sid, st.Closed)
			continue
		}
		if st.Accrued(now) <= st.Claimed {
			continue
		}
		if _, err := s.p.d.Account.Submit(ctx, &ledger.StreamClaim{ID: id}); err != nil {
			s.p.d.Log.Warn("claim standby stream", "stream", id, "session", sid, "err", err)
			continue
		}
		s.p.d.Log.Debug("standby stream claimed", "stream", id, "session", sid)
	}
}

func (s *standbyPay) drop(id terms.Hash32, sessionID string, closed bool) {
	s.mu.Lock()
	delete(s.streams, id)
	s.mu.Unlock()
	if closed {
		if h := s.p.sess.holder(); h != nil {
			h.Forget(sessionID)
		}
	}
}
