package provider

import (
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/p2p/expert"
)

// ExpertHolders is the holders this provider would send expert e of layer
// l of model to, first choice first (none unless the model runs remote
// experts here).
func (p *Provider) ExpertHolders(model [32]byte, layer, e int) []expert.Holder {
	if p.remote == nil {
		return nil
	}
	return p.remote.table.Holders(model, layer, e)
}

// ExpertCallerStats is, per served model running remote experts, what its
// expert caller did.
func (p *Provider) ExpertCallerStats() map[string]expert.CallerStats { return p.remote.stats() }

// ExpertServerStats is what this provider did as an expert holder; false
// when it holds none.
func (p *Provider) ExpertServerStats() (expert.ServerStats, bool) {
	if p.holder == nil {
		return expert.ServerStats{}, false
	}
	return p.holder.srv.Stats(), true
}

// DevnetMoEModelName is the name the devnet's generated MoE model is
// served as.
const DevnetMoEModelName = "tenzro-devnet-moe"

// EnsureDevnetMoEModel generates the devnet's MoE model (`tenzrod model
// gen --moe` defaults) into dir unless a model is already there, and
// returns its catalog ID (hex).
func EnsureDevnetMoEModel(dir string) (string, error) {
	o := modelgen.DevnetOptions()
	o.Name, o.MoE = DevnetMoEModelName, true
	return ensureModel(dir, o, "devnet moe model")
}
