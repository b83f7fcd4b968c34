package provider

import (
	"context"

	"github.com/tenzrod/tenzrod/inference/upstream"
)

// maxContinuationProbes bounds the probes of an engine that keeps
// failing them; the configured mode then stands.
const maxContinuationProbes = 3

// probeContinuation finds, once the engine first answers, which of the
// configured continuation mode it honours, so a provider refuses at once
// (continuation_unsupported, and the gateway restarts the answer cleanly)
// what its engine would refuse anyway, instead of spending a round trip on
// every broken stream it is asked to continue. An inconclusive probe (the
// engine busy or failing) keeps the configured mode and is tried again at
// the next check, up to maxContinuationProbes times.
func (s *modelSet) probeContinuation(ctx context.Context, m *servedModel, up *upstream.Client) {
	m.mu.Lock()
	done := m.cont != "" || m.contProbes >= maxContinuationProbes
	if !done {
		m.contProbes++
	}
	m.mu.Unlock()
	if done {
		return
	}
	want := m.cfg.ContinuationMode()
	got, err := up.ProbeContinuation(ctx, want)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("upstream continuation probe inconclusive; keeping the configured mode", "model", m.cfg.Name, "continuation", want, "err", err)
		}
		return
	}
	m.mu.Lock()
	m.cont = got
	m.mu.Unlock()
	if got != want {
		s.log.Warn("upstream engine refuses the configured continuation; continuing less", "model", m.cfg.Name, "configured", want, "honoured", got)
	} else {
		s.log.Info("upstream continuation probed", "model", m.cfg.Name, "continuation", got)
	}
}

// continuationMode is how this model continues another provider's text:
// the probed mode once known, the configured one before.
func (m *servedModel) continuationMode() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.cont != "" {
		return m.cont
	}
	return m.cfg.ContinuationMode()
}
