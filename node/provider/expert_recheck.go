package provider

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/p2p/expert"
)

// Where a serving provider keeps its sampling secret, its sampled expert
// batches and the dispute evidence their re-execution found, under the
// node's home (one directory per model).
const (
	expertSampleKeyFile = "experts/sample.key"
	expertSamplesDir    = "experts/samples"
	expertEvidenceDir   = "experts/evidence"
)

// nodeRedo re-executes a stored batch with the served model's own copy
// of the expert: the weights this node loaded and verified against the
// catalog ID, the ones a committee re-runs. Only a batch of an expert
// the served model lacks goes to another holder of the expert, paid for
// that work like for any batch (pay). Re-executing at another holder
// first would let a lying standby turn an honest holder's batch into
// evidence, and the dispute would cost this node its bond.
type nodeRedo struct {
	local  expert.Computer
	self   peer.ID
	caller *expert.Caller
	pay    func(*expert.SampledBatch, expert.Redone)
}

func (n *nodeRedo) Redo(ctx context.Context, b *expert.SampledBatch) (expert.Redone, error) {
	if n.local != nil {
		r, err := expert.LocalRedo{Computer: n.local, Self: n.self}.Redo(ctx, b)
		if !errors.Is(err, expert.ErrNotHeld) {
			return r, err
		}
	}
	r, err := n.caller.Redo(ctx, b)
	if err == nil && n.pay != nil {
		n.pay(b, r)
	}
	return r, err
}

// servedExperts computes the experts of one served MoE model with its
// loaded weights, on one thread: re-execution runs beside serving.
type servedExperts struct {
	id [32]byte
	m  *llm.Model
}

func (s servedExperts) Compute(_ context.Context, model [32]byte, layer, e int, rows [][]float32) ([][]float32, error) {
	if model != s.id || layer < 0 || layer >= s.m.Cfg.Layers || e < 0 || e >= s.m.Cfg.Experts {
		return nil, fmt.Errorf("%w: model %x layer %d expert %d", expert.ErrNotHeld, model[:4], layer, e)
	}
	return s.m.ExpertForward(layer, e, rows, 1)
}

// sampling sets up cfg's sampler for model: the node's sampling secret
// (made once, kept in the home), a bounded store of sampled batches and
// one of evidence, and a rechecker fed by the caller that re-executes
// with m, the served model's weights. finish binds the
// rechecker to the caller once it exists and starts it.
func (r *remoteExperts) sampling(model [32]byte, m *llm.Model, cfg *expert.CallerConfig) (finish func(*expert.Caller), err error) {
	key, err := expert.LoadSampleKey(r.p.d.Path(expertSampleKeyFile))
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	s, err := expert.NewSampler(key)
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	sub := hex.EncodeToString(model[:8])
	st, err := r.openStores(sub, expertSamplesDir, expertEvidenceDir)
	if err != nil {
		return nil, err
	}
	samples, evidence := st[0], st[1]
	redo := &nodeRedo{local: servedExperts{id: model, m: m}, self: r.p.d.Host.ID(), pay: func(b *expert.SampledBatch, d expert.Redone) {
		t := new(expert.Tally)
		t.Record(expert.HolderUsage{Holder: d.Holder.Peer, Machine: d.Holder.Machine, Price: d.Holder.Price,
			Batches: 1, ExpertTokens: uint64(len(b.Positions)), Receipts: [][]byte{d.Receipt}})
		r.settle(context.Background(), model, t)
	}}
	rc, err := expert.NewRechecker(samples, evidence, redo, r.met, r.p.d.Log, r.p.d.Clock.Now)
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	disp, err := r.disputer(sub, evidence)
	if err != nil {
		return nil, err
	}
	cfg.Sampler, cfg.OnSample = s, rc.Offer
	return func(c *expert.Caller) {
		redo.caller = c
		r.mu.Lock()
		r.rechecks[model] = rc
		if disp != nil {
			r.disputers[model] = disp
		}
		r.mu.Unlock()
		r.background(rc.Run)
		if disp != nil {
			r.p.d.Log.Info("expert evidence is disputed on chain", "model", sub, "bond", bondText(r.cfg.DisputeBond),
				"interval", r.cfg.DisputeInterval, "account", r.p.d.Account.Account())
			r.background(disp.Run)
		}
	}, nil
}

// recheckStats is, per model, what re-execution of sampled batches found.
func (r *remoteExperts) recheckStats() map[[32]byte]expert.RecheckStats {
	out := map[[32]byte]expert.RecheckStats{}
	if r == nil {
		return out
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for m, rc := range r.rechecks {
		out[m] = rc.Stats()
	}
	return out
}

// ExpertRecheckStats is, per MoE model running remote experts here, what
// the re-execution of its sampled batches found.
func (p *Provider) ExpertRecheckStats() map[[32]byte]expert.RecheckStats {
	return p.remote.recheckStats()
}

// ExpertEvidence is the dispute evidence kept for model: sampled batches
// whose re-execution differed from what their holder signed.
func (p *Provider) ExpertEvidence(model [32]byte) ([]*expert.Evidence, error) {
	if p.remote == nil {
		return nil, nil
	}
	p.remote.mu.RLock()
	rc := p.remote.rechecks[model]
	p.remote.mu.RUnlock()
	if rc == nil {
		return nil, nil
	}
	return rc.Evidence()
}
