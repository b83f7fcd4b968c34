package devnet

import (
	"fmt"
	"path/filepath"

	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/node/validator"
)

// moePlan is the MoE part of a devnet with --moe-holders N: a generated
// MoE model every provider serves (its dense part) beside the devnet
// model, with its experts at N holder processes, each expert at two.
type moePlan struct {
	holders int
	dir, id string
	price   uint64
}

// holderPrefix names the holder processes (holder-0, ...).
const holderPrefix = "holder-"

// holderPricePerToken is what devnet holders ask per expert-token.
const holderPricePerToken = 1

// maxMoEHolders: with the devnet MoE model's 4 experts per layer, a fifth
// holder would hold nothing.
var maxMoEHolders = modelgen.DevnetOptions().Experts

func checkMoEHolders(n int) error {
	if n != 0 && (n < 2 || n > maxMoEHolders) {
		return fmt.Errorf("devnet: --moe-holders %d: 0, or 2..%d (each expert at two holders)", n, maxMoEHolders)
	}
	return nil
}

func newMoEPlan(o Options) (*moePlan, error) {
	if o.MoEHolders == 0 {
		return nil, nil
	}
	dir := filepath.Join(o.Dir, "models", provider.DevnetMoEModelName)
	id, err := provider.EnsureDevnetMoEModel(dir)
	if err != nil {
		return nil, err
	}
	return &moePlan{holders: o.MoEHolders, dir: dir, id: id, price: holderPricePerToken}, nil
}

// model is the MoE model's served entry.
func (m *moePlan) model() node.ModelConfig {
	mc := node.DevnetModel(m.dir, m.id)
	mc.Name = provider.DevnetMoEModelName
	// Buyers pay the serving provider per expert-token at twice what it
	// pays its holders.
	mc.RateCard.ExpertTokens = 2 * holderPricePerToken
	return mc
}

// serving makes a provider serve the MoE model with its experts remote.
func (m *moePlan) serving(cfg *node.Config) {
	cfg.Provider.Models = append(cfg.Provider.Models, m.model())
	cfg.Provider.RemoteExperts.Models = []string{provider.DevnetMoEModelName}
}

// holder makes holder i of the plan hold, in every layer, the experts e
// with e mod N = i or (e+1) mod N = i: each expert at two holders, and
// the serving providers' rendezvous order makes each holder first choice
// for about 1/N of them.
func (m *moePlan) holder(cfg *node.Config, i int) {
	o := modelgen.DevnetOptions()
	layers := make([]uint32, o.Layers)
	for l := range layers {
		layers[l] = uint32(l)
	}
	var experts []uint32
	for e := range o.Experts {
		if e%m.holders == i || (e+1)%m.holders == i {
			experts = append(experts, uint32(e))
		}
	}
	cfg.Provider.Models = nil
	cfg.Provider.Standby.Enabled = false
	cfg.Provider.Experts = []provider.ExpertConfig{{Model: m.id, Dir: m.dir, Layers: layers, Experts: experts, PricePerToken: m.price}}
}

// held is the MoE model as a validator holds it, to judge disputes over
// its expert batches.
func (m *moePlan) held() validator.ModelConfig {
	return validator.ModelConfig{Name: provider.DevnetMoEModelName, Dir: m.dir, ID: m.id}
}

// tokenizer lets a router count the MoE model's tokens too.
func (m *moePlan) tokenizer(cfg *node.Config) {
	cfg.Router.Tokenizers = append(cfg.Router.Tokenizers, node.TokenizerConfig{Dir: m.dir, ID: m.id})
}
