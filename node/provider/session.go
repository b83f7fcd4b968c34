package provider

import (
	"context"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
)

// sessions is the provider's part in sessions with continuity: as a
// primary it seals each turn's state to the session's successor; with
// [provider.standby] enabled it is a successor too, holding sessions'
// states (in memory, sessioncache.Holder) and pre-filling its engine with
// them, and claiming its standby pay on a chain.
type sessions struct {
	p    *Provider
	met  *sessioncache.Metrics
	key  *sessioncache.PrivateKey // nil: no standby
	hold *sessioncache.Holder     // nil: no standby
	srv  *sessioncache.Server
	pay  *standbyPay // nil without a chain

	prefill chan struct{} // one background prefill at a time: the CPU serves turns first

	mu      sync.Mutex
	warming map[string]chan struct{} // session → closed once its latest state is pre-filled
	stopped bool                     // no background work starts any more

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newSessions(p *Provider) (*sessions, error) {
	s := &sessions{p: p, met: sessioncache.NewMetrics(p.d.Registerer), prefill: make(chan struct{}, 1), warming: map[string]chan struct{}{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	cfg := p.cfg.Standby
	if !cfg.Enabled {
		return s, nil
	}
	var err error
	if s.key, err = sessioncache.LoadOrCreateKey(p.d.Path(cfg.KeyFile)); err != nil {
		return nil, err
	}
	st, err := sessioncache.OpenDirStore(p.d.Path(cfg.StateDir))
	if err != nil {
		return nil, err
	}
	hc := sessioncache.HolderConfig{
		Key: s.key, Store: st, Session: p.d.Session.Current, Standby: s.standsBy, OnState: s.onState,
		MaxSessions: cfg.MaxSessions, Clock: p.d.Clock, Metrics: s.met, Log: p.d.Log,
	}
	if p.d.Chain != nil {
		s.pay = newStandbyPay(p)
		hc.Fund = s.pay.fund
	}
	if s.hold, err = sessioncache.NewHolder(hc); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sessions) Start(context.Context) error {
	if s.hold == nil {
		return nil
	}
	srv, err := sessioncache.NewServer(s.p.d.Host.Host(), s.hold, sessioncache.ServerConfig{Registerer: s.p.d.Registerer}, s.p.d.Log)
	if err != nil {
		return err
	}
	s.srv = srv
	s.restore()
	if s.pay != nil {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.pay.run(s.ctx, s.p.cfg.Standby.ClaimInterval) }()
	}
	return nil
}

func (s *sessions) Stop(context.Context) error {
	if s.srv != nil {
		s.srv.Stop()
	}
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// spawn runs fn in the background unless the part is stopping; Stop waits
// for it.
func (s *sessions) spawn(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
	return true
}

// offer is the announcement's standby offer, nil without standby.
func (s *sessions) offer() *gossip.StandbyOffer {
	if s.key == nil {
		return nil
	}
	return &gossip.StandbyOffer{FeePerHour: s.p.cfg.Standby.FeePerHour, HPKEKey: s.key.Public()}
}

// prefiller is the engine of a model served here warm that can pre-fill
// a session, or nil.
func (s *sessions) prefiller(modelID []byte) inference.Prefiller {
	m := s.p.models.find(hex.EncodeToString(modelID))
	if m == nil {
		return nil
	}
	_, st, eng := m.snapshot()
	pf, _ := eng.(inference.Prefiller)
	if st != gossip.StateWarm || pf == nil {
		return nil
	}
	return pf
}

// standsBy: a successor stands by only for models its own engine can
// pre-fill (an upstream engine could not serve the turn warm).
func (s *sessions) standsBy(modelID []byte) bool { return s.prefiller(modelID) != nil }

// onState pre-fills the engine with a session's verified state.
func (s *sessions) onState(a sessioncache.Assignment, st *sessioncache.State) {
	s.warm(st.SessionID, st.ModelID, st.Ints())
}

// warm pre-fills the session's tokens in the background; waitWarm waits
// for the latest.
func (s *sessions) warm(sessionID string, modelID []byte, tokens []int) {
	pf := s.prefiller(modelID)
	if pf == nil {
		return
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.warming[sessionID] = done
	s.mu.Unlock()
	started := s.spawn(func() {
		defer func() {
			close(done)
			s.mu.Lock()
			if s.warming[sessionID] == done {
				delete(s.warming, sessionID)
			}
			s.mu.Unlock()
		}()
		select {
		case s.prefill <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		defer func() { <-s.prefill }()
		s.mu.Lock()
		superseded := s.warming[sessionID] != done
		s.mu.Unlock()
		if superseded {
			// A newer state of the session came meanwhile: pre-filling
			// this older one would cut the cache back to it.
			return
		}
		start := time.Now()
		if err := pf.Prefill(s.ctx, sessionID, tokens); err != nil {
			if s.ctx.Err() == nil {
				s.p.d.Log.Warn("pre-fill session state", "session", sessionID, "tokens", len(tokens), "err", err)
			}
			return
		}
		s.p.d.Log.Debug("session state pre-filled", "session", sessionID, "tokens", len(tokens), "took", time.Since(start))
	})
	if !started {
		s.mu.Lock()
		if s.warming[sessionID] == done {
			delete(s.warming, sessionID)
		}
		s.mu.Unlock()
		close(done)
	}
}

// waitWarm waits until the session's pending pre-fill (if any) is done,
// or ctx ends.
func (s *sessions) waitWarm(ctx context.Context, sessionID string) {
	s.mu.Lock()
	done := s.warming[sessionID]
	s.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Holder is the successor side's state, nil without standby.
func (s *sessions) holder() *sessioncache.Holder { return s.hold }

// successorOf returns the successor a turn names, if any.
func successorOf(t *infer.SessionTurn) (peer.ID, bool, error) {
	if t == nil || len(t.SuccessorPeer) == 0 {
		return "", false, nil
	}
	id, err := peer.IDFromBytes(t.SuccessorPeer)
	if err != nil {
		return "", false, fmt.Errorf("provider: session successor peer: %w", err)
	}
	return id, true, nil
}
