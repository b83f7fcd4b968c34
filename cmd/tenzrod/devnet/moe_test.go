package devnet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/provider"
)

// TestPlanMoEHolders: --moe-holders 3 adds three holder processes whose
// written configs load and hold every expert of every layer at exactly two
// holders, while each provider serves the MoE model with remote experts
// beside the devnet model; every validator holds both models, so batch
// disputes find a committee, and the devnet says so before it starts; a
// holder count that cannot place each expert twice is refused.
func TestPlanMoEHolders(t *testing.T) {
	o, plans, _ := testPlan(t, Options{Network: "moeplan", Validators: 3, Providers: 2, Gateways: 1, MoEHolders: 3})
	d := modelgen.DevnetOptions()
	at := map[[2]uint32]int{}
	holders, serving, judges := 0, 0, 0
	for _, p := range plans {
		cfg, err := node.Load(p.entry.Home)
		if err != nil {
			t.Fatalf("%s: %v", p.entry.Name, err)
		}
		switch {
		case strings.HasPrefix(p.entry.Name, holderPrefix):
			holders++
			if len(cfg.Provider.Models) != 0 || len(cfg.Provider.Experts) != 1 {
				t.Fatalf("%s: models %v experts %v", p.entry.Name, cfg.Provider.Models, cfg.Provider.Experts)
			}
			for _, l := range cfg.Provider.Experts[0].Layers {
				for _, e := range cfg.Provider.Experts[0].Experts {
					at[[2]uint32{l, e}]++
				}
			}
		case cfg.Role == node.RoleProvider:
			serving++
			if len(cfg.Provider.Models) != 2 || len(cfg.Provider.RemoteExperts.Models) != 1 || cfg.Provider.RemoteExperts.Models[0] != provider.DevnetMoEModelName {
				t.Fatalf("%s: models %v remote %v", p.entry.Name, cfg.Provider.Models, cfg.Provider.RemoteExperts)
			}
		default:
			if cfg.Role == node.RoleValidator {
				judges++
				ids := map[string]bool{}
				for _, m := range cfg.Validator.Models {
					ids[m.ID] = true
				}
				if len(ids) != 2 || !ids[cfg.Router.Tokenizers[0].ID] || !ids[cfg.Router.Tokenizers[1].ID] {
					t.Errorf("%s holds %v, want the devnet and MoE models", p.entry.Name, cfg.Validator.Models)
				}
			}
			if len(cfg.Router.Tokenizers) != 2 {
				t.Errorf("%s: tokenizers %v, want the devnet and MoE models'", p.entry.Name, cfg.Router.Tokenizers)
			}
		}
	}
	if holders != 3 || serving != 2 || judges != 3 {
		t.Fatalf("%d holders, %d providers and %d validators planned", holders, serving, judges)
	}
	var said strings.Builder
	if err := printJudges(&said, plans); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		want := fmt.Sprintf("validator-%d judges disputes over %s, %s\n", i, node.DevnetModelName, provider.DevnetMoEModelName)
		if !strings.Contains(said.String(), want) {
			t.Errorf("the devnet's start says %q, want %q", said.String(), want)
		}
	}
	if strings.Contains(said.String(), "only") {
		t.Errorf("a warning with every model at 3 validators: %q", said.String())
	}
	if len(at) != d.Layers*d.Experts {
		t.Fatalf("%d (layer, expert) pairs held, want %d", len(at), d.Layers*d.Experts)
	}
	for k, n := range at {
		if n != 2 {
			t.Fatalf("layer %d expert %d at %d holders, want 2", k[0], k[1], n)
		}
	}
	for _, n := range []int{1, maxMoEHolders + 1} {
		o.MoEHolders = n
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--moe-holders") {
			t.Errorf("--moe-holders %d: %v", n, err)
		}
	}
}
