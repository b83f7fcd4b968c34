package provider

import (
	"context"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
)

// upstreamCheckInterval is how often each upstream engine is asked
// whether it answers (a GET of its model list: no generation). A call
// that cannot reach the engine triggers a check at once, so a dead engine
// is reported cold within one check and one heartbeat.
const upstreamCheckInterval = time.Second

// kickUpstreamCheck asks the watcher for a check now; it never blocks.
func (s *modelSet) kickUpstreamCheck() {
	select {
	case s.recheck <- struct{}{}:
	default:
	}
}

// stateChanged tells the heartbeat loop a model's state moved.
func (s *modelSet) stateChanged() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// checkUpstream asks m's engine whether it answers and sets m warm or
// cold accordingly: a provider never reports warm a model whose engine is
// gone, so routers stop sending it calls that can only fail.
func (s *modelSet) checkUpstream(ctx context.Context, m *servedModel) {
	up := m.upstream()
	if up == nil {
		return
	}
	err := up.Check(ctx)
	if err == nil {
		s.probeContinuation(ctx, m, up)
	}
	if ctx.Err() != nil {
		return
	}
	m.mu.Lock()
	prev := m.state
	if err == nil {
		m.state, m.err = gossip.StateWarm, nil
	} else {
		m.state, m.err = gossip.StateCold, err
	}
	now := m.state
	m.mu.Unlock()
	if prev == now {
		return
	}
	if err != nil {
		s.log.Warn("upstream engine unreachable; model reported cold", "model", m.cfg.Name, "url", m.cfg.UpstreamURL, "err", err)
	} else {
		s.log.Info("upstream engine answers; model warm", "model", m.cfg.Name, "url", m.cfg.UpstreamURL)
	}
	s.stateChanged()
}

// watchUpstreams checks every upstream model each interval and whenever a
// call could not reach its engine, until ctx ends.
func (s *modelSet) watchUpstreams(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-s.recheck:
		}
		for _, m := range s.models {
			if m.cfg.Engine == EngineUpstream {
				s.checkUpstream(ctx, m)
			}
		}
	}
}

// upstreamDown is the refusal of a call to an upstream model whose engine
// does not answer.
func (m *servedModel) upstreamDown() (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.up != nil && m.state != gossip.StateWarm, m.err
}
