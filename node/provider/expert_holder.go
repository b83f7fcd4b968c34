package provider

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/p2p/expert"
)

// heldModel is one [[provider.experts]] entry: its offer and, once its
// directory verified against the catalog ID, the loaded model.
type heldModel struct {
	cfg   ExpertConfig
	dir   string
	id    [32]byte
	offer gossip.ExpertOffer
	m     atomic.Pointer[llm.Model]
}

// expertHolder holds experts for serving nodes: it loads each held
// model's directory (verified like any served model), serves
// /tenzro/expert/1.0.0 with them, and provides one DHT record per (model,
// layer, expert) it holds.
type expertHolder struct {
	p       *Provider
	held    []*heldModel
	threads int
	srv     *expert.Server

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newExpertHolder(p *Provider) (*expertHolder, error) {
	h := &expertHolder{p: p, threads: min(4, runtime.NumCPU())}
	for i, c := range p.cfg.Experts {
		o, err := c.Offer()
		if err != nil {
			return nil, fmt.Errorf("provider.experts[%d].%w", i, err)
		}
		hm := &heldModel{cfg: c, dir: p.d.Path(c.Dir), offer: o}
		copy(hm.id[:], o.ModelID)
		h.held = append(h.held, hm)
	}
	srv, err := expert.NewServer(p.d.Host.Host(), expert.ServerConfig{Network: p.d.Network, Metrics: expert.NewMetrics(p.d.Registerer), Registerer: p.d.Registerer}, h,
		p.d.Session.Current, p.d.Log)
	if err != nil {
		return nil, err
	}
	h.srv = srv
	return h, nil
}

// Start loads the held models in the background and serves the protocol;
// an expert is computed (and announced) only once its model is loaded.
func (h *expertHolder) Start(ctx context.Context) error {
	ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := h.srv.Start(); err != nil {
		return err
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for _, hm := range h.held {
			if ctx.Err() != nil {
				return
			}
			if err := h.load(hm); err != nil {
				h.p.d.Log.Error("held experts refused", "model", hm.cfg.Model, "dir", hm.dir, "err", err)
				continue
			}
			h.p.loop.kick()
			h.provide(ctx, hm)
		}
	}()
	return nil
}

func (h *expertHolder) Stop(context.Context) error {
	if h.cancel != nil {
		h.cancel()
	}
	h.srv.Stop()
	h.wg.Wait()
	return nil
}

// load verifies hm's directory against its catalog ID and checks that it
// is a MoE model with every layer and expert the entry lists.
func (h *expertHolder) load(hm *heldModel) error {
	id := inference.ModelID(hm.id)
	eng, err := llm.Open(hm.dir, llm.Options{ModelID: &id, Threads: h.threads, CacheBytes: -1})
	if err != nil {
		return err
	}
	m := eng.Model()
	if m.Cfg.Experts == 0 {
		return fmt.Errorf("provider: model %s is not a mixture of experts", hm.cfg.Model)
	}
	if last := hm.offer.Layers[len(hm.offer.Layers)-1]; int(last) >= m.Cfg.Layers {
		return fmt.Errorf("provider: model %s has %d layers, entry lists layer %d", hm.cfg.Model, m.Cfg.Layers, last)
	}
	if last := hm.offer.Experts[len(hm.offer.Experts)-1]; int(last) >= m.Cfg.Experts {
		return fmt.Errorf("provider: model %s has %d experts, entry lists expert %d", hm.cfg.Model, m.Cfg.Experts, last)
	}
	hm.m.Store(m)
	h.p.d.Log.Info("experts held", "model", hm.cfg.Model, "layers", len(hm.offer.Layers), "experts", len(hm.offer.Experts),
		"price_per_token", hm.offer.PricePerToken)
	return nil
}

// provide announces one DHT record per (model, layer, expert) held.
func (h *expertHolder) provide(ctx context.Context, hm *heldModel) {
	for _, l := range hm.offer.Layers {
		for _, e := range hm.offer.Experts {
			if err := h.p.d.Host.ProvideModel(ctx, expert.Key(hm.id, l, e)); err != nil && ctx.Err() == nil {
				h.p.d.Log.Warn("provide expert in DHT", "model", hm.cfg.Model, "layer", l, "expert", e, "err", err)
				return // the host keeps re-providing the records it registered
			}
		}
	}
}

// offers returns the expert offers of the models loaded.
func (h *expertHolder) offers() []gossip.ExpertOffer {
	if h == nil {
		return nil
	}
	var out []gossip.ExpertOffer
	for _, hm := range h.held {
		if hm.m.Load() != nil {
			out = append(out, hm.offer)
		}
	}
	return out
}

// Compute implements expert.Computer over the held, verified models.
func (h *expertHolder) Compute(_ context.Context, model [32]byte, layer, e int, rows [][]float32) ([][]float32, error) {
	for _, hm := range h.held {
		if hm.id != model {
			continue
		}
		m := hm.m.Load()
		if m == nil || layer < 0 || e < 0 || !hm.offer.Holds(uint32(layer), uint32(e)) {
			break
		}
		for _, r := range rows {
			if len(r) != m.Cfg.Dim {
				return nil, fmt.Errorf("%w: rows of %d values, the model's are %d", expert.ErrBadRows, len(r), m.Cfg.Dim)
			}
		}
		out, err := m.ExpertForward(layer, e, rows, h.threads)
		if err == nil && h.p.d.ExpertFault != nil {
			h.p.d.ExpertFault(model, layer, e, out)
		}
		return out, err
	}
	return nil, fmt.Errorf("%w: model %x layer %d expert %d", expert.ErrNotHeld, model[:4], layer, e)
}
