package provider

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/infer"
)

// remoteExperts runs the experts of the served MoE models listed in
// [provider.remote_experts] at holders: the engine's layer hook sends each
// layer's batches through an expert.Caller over the holder table, and
// every call's verified work per holder is handed to pay.
type remoteExperts struct {
	p     *Provider
	cfg   RemoteExpertsConfig
	table *expertTable
	met   *expert.Metrics

	mu      sync.RWMutex
	callers map[*servedModel]*expert.Caller
	// rechecks re-execute each model's sampled batches (expert_recheck.go).
	rechecks map[[32]byte]*expert.Rechecker
	// disputers take each model's evidence to the chain and keep the
	// bindings it needs (expert_dispute.go); empty off chain.
	disputers map[[32]byte]*ExpertDisputer
	stopped   bool
	ctx       context.Context // the role's run (discovery), ended by Stop
	cancel    context.CancelFunc

	// pay receives each finished call's tally (settlement, expert_pay.go),
	// in the background.
	pay func(ctx context.Context, model [32]byte, t *expert.Tally)
	wg  sync.WaitGroup
}

func newRemoteExperts(p *Provider) *remoteExperts {
	r := &remoteExperts{p: p, cfg: p.cfg.RemoteExperts,
		table:   newExpertTable(p.d.Host.ID(), p.cfg.RemoteExperts.HolderTTL, p.d.Clock),
		callers: map[*servedModel]*expert.Caller{}, rechecks: map[[32]byte]*expert.Rechecker{}, disputers: map[[32]byte]*ExpertDisputer{},
		met: expert.NewMetrics(p.d.Registerer)}
	if p.d.Chain != nil {
		r.table.barred = newBarredView(p.d.Chain, func() int64 { return p.d.Chain.App().Height() }).barred
	}
	r.pay = r.payHolders
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Start does nothing: models load (and start discovery) as the provider
// loop starts, before this part's turn, so the run context exists from New.
func (r *remoteExperts) Start(context.Context) error { return nil }

// Stop ends discovery and waits for the payments of finished calls to be
// signed.
func (r *remoteExperts) Stop(context.Context) error {
	r.mu.Lock()
	r.stopped = true
	if r.cancel != nil {
		r.cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}

// background runs f on the role's run context until Stop.
func (r *remoteExperts) background(f func(ctx context.Context)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f(r.ctx)
	}()
}

// settle hands a finished call's tally to pay in the background.
func (r *remoteExperts) settle(ctx context.Context, model [32]byte, t *expert.Tally) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.pay == nil {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.pay(ctx, model, t)
	}()
}

// wants reports whether model m runs its experts at holders.
func (r *remoteExperts) wants(m ModelConfig) bool {
	return r != nil && r.cfg.lists(m)
}

// hook is the layer hook of model m: it fails until the model is loaded
// and its caller exists.
func (r *remoteExperts) hook(m *servedModel) llm.ExpertLayerFunc {
	return func(ctx context.Context, layer int, in []llm.ExpertBatch) ([][][]float32, error) {
		r.mu.RLock()
		c := r.callers[m]
		r.mu.RUnlock()
		if c == nil {
			return nil, errors.New("provider: remote experts not ready")
		}
		bs := make([]expert.Batch, len(in))
		for i, b := range in {
			bs[i] = expert.Batch{Expert: b.Expert, Positions: b.Positions, Rows: b.Rows}
		}
		return c.Layer(ctx, layer, bs)
	}
}

// ready makes m's caller once its engine is loaded and returns the engine
// to serve: one that gives each call its own tally.
func (r *remoteExperts) ready(m *servedModel, eng *llm.Engine) (inference.Engine, error) {
	info := eng.Info()
	if info.Experts == 0 {
		return nil, fmt.Errorf("provider: remote_experts lists %q, which is not a mixture of experts", m.cfg.Name)
	}
	// The Dialer finds a holder's addresses in the DHT when the
	// peerstore has none.
	cfg := expert.CallerConfig{Network: r.p.d.Network, Model: info.ID,
		Dim: eng.Model().Cfg.Dim, Timeout: r.cfg.Timeout, Now: r.p.d.Clock.Now, Metrics: r.met}
	finish, err := r.sampling(info.ID, eng.Model(), &cfg)
	if err != nil {
		return nil, err
	}
	c, err := expert.NewCaller(r.p.d.Host.Dialer(), cfg, r.table, r.p.d.Log)
	if err != nil {
		return nil, err
	}
	finish(c)
	r.mu.Lock()
	r.callers[m] = c
	r.mu.Unlock()
	r.background(func(ctx context.Context) { r.discover(ctx, info.ID, info.Layers, info.Experts) })
	r.p.d.Log.Info("model runs its experts at holders", "model", m.cfg.Name, "id", hex.EncodeToString(info.ID[:]),
		"experts", info.Experts, "layers", info.Layers)
	return &tallied{Engine: eng, r: r, model: info.ID}, nil
}

// apply feeds a verified announcement to the holder table. A holder
// that restarted is forgiven its failures at every caller: it failed
// while it was down, and would otherwise wait out its breaker's cooldown
// (30 s) behind the other holders.
func (r *remoteExperts) apply(a *gossip.VerifiedAnnouncement) {
	if r == nil || !r.table.apply(a) {
		return
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, c := range r.callers {
		c.Forgive(a.Peer)
	}
}

// stats returns the caller counters of every remote-experts model.
func (r *remoteExperts) stats() map[string]expert.CallerStats {
	out := map[string]expert.CallerStats{}
	if r == nil {
		return out
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for m, c := range r.callers {
		out[m.cfg.Name] = c.Stats()
	}
	return out
}

// tallied is a remote-experts engine: each Generate runs under its own
// expert.Tally, handed to pay once the answer is complete (or cut off:
// the holders' verified work is paid either way).
type tallied struct {
	*llm.Engine
	r     *remoteExperts
	model [32]byte
}

func (t *tallied) Generate(ctx context.Context, req inference.GenerateRequest, emit func(inference.Token) error) (inference.Result, error) {
	if expert.TallyFrom(ctx) != nil {
		return t.Engine.Generate(ctx, req, emit) // the caller's call: it pays (startCall)
	}
	tally := new(expert.Tally)
	res, err := t.Engine.Generate(expert.WithTally(ctx, tally), req, emit)
	t.r.settle(context.WithoutCancel(ctx), t.model, tally)
	return res, err
}

// expertCall is one served call of a remote-experts engine: its tally,
// carried by the call's context.
type expertCall struct {
	t     *tallied
	tally *expert.Tally
}

// startCall returns ctx carrying a new tally when eng runs its experts
// at holders; the call is nil (and ctx unchanged) for any other engine.
func startCall(ctx context.Context, eng inference.Engine) (context.Context, *expertCall) {
	t, ok := eng.(*tallied)
	if !ok {
		return ctx, nil
	}
	c := &expertCall{t: t, tally: new(expert.Tally)}
	return expert.WithTally(ctx, c.tally), c
}

// finish ends the call. An answered call's holders are paid before its
// final frame (payCall) and reported, for the receipt to claim their
// expert-tokens and sign their account; the verified work of a call that
// failed is paid in the background, and nothing is reported.
func (c *expertCall) finish(ctx context.Context, answered bool) []infer.ExpertUse {
	if c == nil {
		return nil
	}
	if !answered {
		c.t.r.settle(context.WithoutCancel(ctx), c.t.model, c.tally)
		return nil
	}
	return c.t.r.payCall(ctx, c.t.model, c.tally)
}
