package provider

import (
	"fmt"
	"path/filepath"

	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// bondText is how the log shows a configured dispute bond.
func bondText(b uint64) string {
	if b == 0 {
		return "the chain's dispute_min_bond"
	}
	return fmt.Sprint(b)
}

// disputer is the model's disputer of evidence (subdirectory sub), nil
// off chain or with provider.remote_experts.dispute off: then no
// bindings are kept either.
func (r *remoteExperts) disputer(sub string, evidence *expert.SampleStore) (*ExpertDisputer, error) {
	if !r.cfg.Dispute || r.p.d.Chain == nil || r.p.d.Account == nil {
		return nil, nil
	}
	st, err := r.openStores(sub, expertBindingsDir, expertDisputedDir)
	if err != nil {
		return nil, err
	}
	bindings, disputed := st[0], st[1]
	return NewExpertDisputer(ExpertDisputerConfig{Evidence: evidence, Bindings: bindings, Disputed: disputed, Chain: r.p.d.Chain,
		Account: r.p.d.Account, Bond: r.cfg.DisputeBond, Interval: r.cfg.DisputeInterval, Clock: r.p.d.Clock, Metrics: r.met, Log: r.p.d.Log})
}

// bind keeps the binding of each sampled receipt of u to rec, the record
// about to pay for u's call, when the model's evidence is disputed.
func (r *remoteExperts) bind(model [32]byte, rec *receipt.PaymentRecord, u *expert.HolderUsage) error {
	if len(u.Sampled) == 0 {
		return nil
	}
	r.mu.RLock()
	d := r.disputers[model]
	r.mu.RUnlock()
	if d == nil {
		return nil
	}
	enc, err := expert.EncodeBinding(expert.BindingOf(u, rec.Payer, rec.RequestDigest))
	if err != nil {
		return err
	}
	for _, h := range u.Sampled {
		if _, err := d.cfg.Bindings.Put(h, enc); err != nil {
			return err
		}
	}
	return nil
}

// ExpertDisputeStats is, per MoE model running remote experts here, what
// taking its evidence to the chain did.
func (p *Provider) ExpertDisputeStats() map[[32]byte]DisputeStats {
	out := map[[32]byte]DisputeStats{}
	if p.remote == nil {
		return out
	}
	p.remote.mu.RLock()
	defer p.remote.mu.RUnlock()
	for m, d := range p.remote.disputers {
		out[m] = d.Stats()
	}
	return out
}

// openStores opens the stores of one model (sub) under each of the home's
// dirs, in order, each with the store's default bound.
func (r *remoteExperts) openStores(sub string, dirs ...string) ([]*expert.SampleStore, error) {
	out := make([]*expert.SampleStore, len(dirs))
	for i, dir := range dirs {
		st, err := expert.OpenSampleStore(filepath.Join(r.p.d.Path(dir), sub), 0)
		if err != nil {
			return nil, fmt.Errorf("provider: %w", err)
		}
		out[i] = st
	}
	return out, nil
}
