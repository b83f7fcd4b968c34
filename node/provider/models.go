package provider

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/upstream"
)

// servedModel is one model a provider serves and its load state.
type servedModel struct {
	cfg   ModelConfig
	dir   string
	mu    sync.RWMutex
	offer gossip.ModelOffer
	state gossip.ModelState
	eng   inference.Engine
	up    *upstream.Client // engine = "upstream"
	err   error
	// cont is the continuation mode the upstream engine was found to
	// honour; empty until a probe was conclusive. contProbes counts the
	// probes made, so an engine that keeps failing them is not asked for
	// a generation every check.
	cont       string
	contProbes int
}

func (m *servedModel) upstream() *upstream.Client {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.up
}

func (m *servedModel) snapshot() (gossip.ModelOffer, gossip.ModelState, inference.Engine) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.offer, m.state, m.eng
}

// modelSet is a provider's served models. Models load in the background
// (cold → warming → warm) so the provider heartbeats while it loads.
type modelSet struct {
	log      *slog.Logger
	remote   *remoteExperts // nil: every model runs its experts locally
	models   []*servedModel
	slots    chan struct{} // capacity: requests served at once
	inFlight atomic.Int32
	queued   atomic.Int32
	// changed wakes the heartbeat loop when a model's state moves;
	// recheck asks for an upstream health check now.
	changed, recheck chan struct{}
}

func newModelSet(cfg Config, path func(string) string, log *slog.Logger, remote *remoteExperts) (*modelSet, error) {
	s := &modelSet{log: log, remote: remote, slots: make(chan struct{}, cfg.Capacity),
		changed: make(chan struct{}, 1), recheck: make(chan struct{}, 1)}
	for i, mc := range cfg.Models {
		o, err := mc.Offer()
		if err != nil {
			return nil, fmt.Errorf("provider.models[%d]: %w", i, err)
		}
		s.models = append(s.models, &servedModel{cfg: mc, dir: path(mc.Dir), offer: o, state: gossip.StateCold})
	}
	return s, nil
}

// load verifies and loads every directory-backed model, one at a time.
func (s *modelSet) load(ctx context.Context) {
	for _, m := range s.models {
		if ctx.Err() != nil {
			return
		}
		if m.cfg.Engine == EngineUpstream {
			uc := m.cfg.UpstreamConfig()
			uc.OnUnreachable = s.kickUpstreamCheck
			up, err := upstream.New(uc)
			m.mu.Lock()
			if err != nil {
				m.err = err
			} else {
				m.up = up
			}
			m.mu.Unlock()
			// Warm only once the engine answers.
			s.checkUpstream(ctx, m)
			continue
		}
		m.mu.Lock()
		m.state = gossip.StateWarming
		m.mu.Unlock()
		opts := llm.Options{}
		if m.cfg.ID != "" {
			var id inference.ModelID
			b, _ := hex.DecodeString(m.cfg.ID)
			copy(id[:], b)
			opts.ModelID = &id
		}
		remote := s.remote.wants(m.cfg)
		if remote {
			opts.ExpertLayer = s.remote.hook(m)
		}
		var eng inference.Engine
		le, err := llm.Open(m.dir, opts)
		if err == nil {
			eng = le
			if remote {
				eng, err = s.remote.ready(m, le)
			}
		}
		m.mu.Lock()
		if err != nil {
			m.err, m.state = err, gossip.StateCold
			m.mu.Unlock()
			s.log.Error("model load refused", "model", m.cfg.Name, "dir", m.dir, "err", err)
			continue
		}
		info := eng.Info()
		if q := strings.ToLower(info.Quant); m.cfg.Quant != "" && !strings.EqualFold(m.cfg.Quant, q) {
			m.err, m.state = fmt.Errorf("provider: model %s: quant %q configured, but the weights are %q", m.cfg.Name, m.cfg.Quant, q), gossip.StateCold
			m.mu.Unlock()
			s.log.Error("model load refused", "model", m.cfg.Name, "dir", m.dir, "err", m.err)
			continue
		}
		m.offer.Quant = strings.ToLower(info.Quant)
		m.eng = eng
		m.offer.ModelID = info.ID[:]
		if m.cfg.WeightsHash == "" {
			m.offer.WeightsHash = info.ID[:]
		}
		if info.Experts > 0 && info.ExpertsUsed > 0 {
			// Every layer of the embedded engine's MoE models is a MoE
			// layer: gateways bound the billed expert-tokens by it.
			m.offer.MoE = &gossip.MoEShape{Layers: uint32(info.Layers), TopK: uint32(info.ExpertsUsed)}
		}
		m.state = gossip.StateWarm
		m.mu.Unlock()
		s.log.Info("model warm", "model", m.cfg.Name, "id", info.ID, "params", info.Params, "quant", info.Quant, "kernels", llm.Kernels())
	}
}

// offers returns the announced offers of models whose ID is known.
func (s *modelSet) offers() []gossip.ModelOffer {
	var out []gossip.ModelOffer
	for _, m := range s.models {
		o, _, _ := m.snapshot()
		if !isZero(o.ModelID) {
			out = append(out, o)
		}
	}
	return out
}

// statuses returns each known model's state for the heartbeat.
func (s *modelSet) statuses() []gossip.ModelStatus {
	var out []gossip.ModelStatus
	for _, m := range s.models {
		o, st, _ := m.snapshot()
		if !isZero(o.ModelID) {
			out = append(out, gossip.ModelStatus{ModelID: o.ModelID, State: st})
		}
	}
	return out
}

// find returns the model named by name or by hex model ID.
func (s *modelSet) find(name string) *servedModel {
	for _, m := range s.models {
		o, _, _ := m.snapshot()
		if o.Name == name || hex.EncodeToString(o.ModelID) == name {
			return m
		}
	}
	return nil
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
