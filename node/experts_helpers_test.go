package node

import (
	"context"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// moeModel is the devnet MoE model generated for one chain test.
type moeModel struct {
	dir, id string
	mid     [32]byte
	opts    modelgen.GenOptions
}

func newDevnetMoE(t *testing.T) moeModel {
	t.Helper()
	m := moeModel{dir: filepath.Join(t.TempDir(), "moe"), opts: modelgen.DevnetOptions()}
	var err error
	if m.id, err = provider.EnsureDevnetMoEModel(m.dir); err != nil {
		t.Fatal(err)
	}
	b, _ := hex.DecodeString(m.id)
	copy(m.mid[:], b)
	return m
}

// layers lists every layer of the model.
func (m moeModel) layers() []uint32 {
	out := make([]uint32, m.opts.Layers)
	for l := range out {
		out[l] = uint32(l)
	}
	return out
}

// serve makes c the provider serving the model with its experts at
// holders, billing expert-tokens at expertRate. The exchange timeout is
// generous: payments are checked against what holders computed, so no
// batch may be retired for slowness on a loaded machine.
func (m moeModel) serve(c *Config) {
	c.Provider.Models = []ModelConfig{{Name: provider.DevnetMoEModelName, Dir: m.dir, ID: m.id, Engine: provider.EngineEmbedded,
		RateCard: terms.RateCard{InputTokens: 1, OutputTokens: 1, ExpertTokens: expertRate}}}
	c.Provider.RemoteExperts.Models = []string{provider.DevnetMoEModelName}
	c.Provider.RemoteExperts.Timeout = 30 * time.Second
}

// hold makes c a holder of the listed experts of every layer at price.
func (m moeModel) hold(c *Config, experts []uint32, price uint64) {
	c.Provider.Models = nil
	c.Provider.Experts = []provider.ExpertConfig{{Model: m.id, Dir: m.dir, Layers: m.layers(), Experts: experts, PricePerToken: price}}
}

// waitReady waits until every provider of net is registered on its first
// validator's chain, serving knows every expert at n holders, and its
// model is warm.
func (m moeModel) waitReady(t *testing.T, net *chainNet, serving *Node, n int) {
	t.Helper()
	c := net.validators[0].Chain()
	nodetest.Eventually(t, 60*time.Second, "every provider registered", func() bool {
		for _, p := range net.registered {
			if _, ok, err := c.Provider(context.Background(), p.id.MachineID()); err != nil || !ok {
				return false
			}
		}
		return true
	})
	nodetest.Eventually(t, 30*time.Second, "every expert at its holders", func() bool {
		for l := range m.opts.Layers {
			for e := range m.opts.Experts {
				if len(serving.Provider().ExpertHolders(m.mid, l, e)) != n {
					return false
				}
			}
		}
		return true
	})
	waitWarm(t, serving)
}
