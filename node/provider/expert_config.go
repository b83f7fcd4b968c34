package provider

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
)

// ExpertConfig is one [[provider.experts]] entry: experts of a MoE model
// this provider holds for serving nodes, computed over
// /tenzro/expert/1.0.0 with its own copy of the weights.
type ExpertConfig struct {
	// Model is the MoE model's catalog ID (64 hex digits); the directory
	// must have it as its catalog root or nothing is held.
	Model string `toml:"model"`
	// Dir is the model directory (relative to the home).
	Dir string `toml:"dir"`
	// Layers and Experts are the indices held: every listed expert of
	// every listed layer, each strictly ascending.
	Layers  []uint32 `toml:"layers"`
	Experts []uint32 `toml:"experts"`
	// PricePerToken is the announced price of one expert-token (one input
	// row computed by one expert), integer micro-units.
	PricePerToken uint64 `toml:"price_per_token"`
}

// Offer converts the entry into its announced form.
func (e ExpertConfig) Offer() (gossip.ExpertOffer, error) {
	id, err := decodeHash(e.Model)
	if err != nil {
		return gossip.ExpertOffer{}, fmt.Errorf("model: %w", err)
	}
	if e.Dir == "" {
		return gossip.ExpertOffer{}, errors.New("dir: the model directory holding the experts is required")
	}
	o := gossip.ExpertOffer{ModelID: id, Layers: e.Layers, Experts: e.Experts, PricePerToken: e.PricePerToken}
	// The gossip validator's rules, so config and wire agree.
	an := gossip.Announcement{MachineID: make([]byte, 32), Region: "DE", HardwareClass: "x", Experts: []gossip.ExpertOffer{o}}
	if err := an.Check(); err != nil {
		return gossip.ExpertOffer{}, fmt.Errorf("layers/experts: %w", err)
	}
	return o, nil
}

// RemoteExpertsConfig is [provider.remote_experts]: which served MoE
// models run their experts at holders instead of locally.
type RemoteExpertsConfig struct {
	// Models are names (or hex IDs) of served embedded MoE models.
	Models []string `toml:"models"`
	// Timeout bounds one exchange with one holder; a holder silent for
	// longer is retired for the batch and its standby gets it.
	Timeout time.Duration `toml:"timeout"`
	// HolderTTL is how long a holder's announcement stands without a
	// newer one.
	HolderTTL time.Duration `toml:"holder_ttl"`
	// Dispute, on a chain, opens a dispute over every sampled batch whose
	// re-execution differed from what its holder signed, once the record
	// paying the holder for the call settled, with DisputeBond (0: the
	// chain's dispute_min_bond) from this operator's account. Rounds run
	// every DisputeInterval.
	Dispute         bool          `toml:"dispute" comment:"A sampled batch whose re-execution differs from what its holder signed is evidence; with dispute on, it is disputed on chain once the record paying the holder for the call settled, bonding dispute_bond micro-units (0 = the chain's dispute_min_bond) from this operator's account. A committee convicting pays the bond back with a reward; an acquittal gives it to the holder."`
	DisputeBond     uint64        `toml:"dispute_bond"`
	DisputeInterval time.Duration `toml:"dispute_interval"`
}

// DefaultRemoteExpertsConfig returns the defaults (no model remote;
// evidence disputed at the chain's minimum bond).
func DefaultRemoteExpertsConfig() RemoteExpertsConfig {
	return RemoteExpertsConfig{Models: []string{}, Timeout: 2 * time.Second, HolderTTL: time.Minute,
		Dispute: true, DisputeInterval: 30 * time.Second}
}

// lists reports whether model m runs its experts at holders.
func (c RemoteExpertsConfig) lists(m ModelConfig) bool {
	return slices.Contains(c.Models, m.Name) || (m.ID != "" && slices.Contains(c.Models, m.ID))
}

// validateExperts checks [[provider.experts]] and [provider.remote_experts],
// naming each bad key.
func (p Config) validateExperts() []error {
	var errs []error
	seen := map[string]bool{}
	for i, e := range p.Experts {
		if _, err := e.Offer(); err != nil {
			errs = append(errs, fmt.Errorf("provider.experts[%d].%w", i, err))
			continue
		}
		if seen[e.Model] {
			errs = append(errs, fmt.Errorf("provider.experts[%d].model: %s is held by an earlier entry (list its layers and experts there)", i, e.Model))
		}
		seen[e.Model] = true
	}
	r := p.RemoteExperts
	if len(r.Models) > 0 {
		if r.Timeout < 10*time.Millisecond || r.Timeout > time.Minute {
			errs = append(errs, fmt.Errorf("provider.remote_experts.timeout: %s outside 10ms..1m", r.Timeout))
		}
		if r.HolderTTL < time.Second || r.HolderTTL > time.Hour {
			errs = append(errs, fmt.Errorf("provider.remote_experts.holder_ttl: %s outside 1s..1h", r.HolderTTL))
		}
		if r.Dispute && (r.DisputeInterval < 100*time.Millisecond || r.DisputeInterval > time.Hour) {
			errs = append(errs, fmt.Errorf("provider.remote_experts.dispute_interval: %s outside 100ms..1h", r.DisputeInterval))
		}
	}
	for _, name := range r.Models {
		found := false
		for _, m := range p.Models {
			if m.Name == name || m.ID == name {
				found = m.Engine == EngineEmbedded
				break
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("provider.remote_experts.models: %q is not a served model of the %q engine", name, EngineEmbedded))
		}
	}
	// Only experts computed at holders are expert-tokens a receipt claims:
	// a rate for them on any other model would be announced and quoted,
	// and never billed.
	for i, m := range p.Models {
		if m.RateCard.ExpertTokens != 0 && !r.lists(m) {
			errs = append(errs, fmt.Errorf("provider.models[%d].rate_card.expert_tokens: %d, but %q does not run its experts at holders (list it in provider.remote_experts.models)",
				i, m.RateCard.ExpertTokens, m.Name))
		}
	}
	return errs
}
