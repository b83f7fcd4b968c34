package node

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/provider"
)

// TestExpertHoldersPaidOnChain: a registered provider serving the devnet
// MoE model with its experts at three registered holders pays each holder,
// from its own escrow, exactly the expert-tokens it computed times its
// price, settled on chain in the background.
func TestExpertHoldersPaidOnChain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "moe")
	id, err := provider.EnsureDevnetMoEModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := modelgen.DevnetOptions()
	layers := make([]uint32, o.Layers)
	for l := range layers {
		layers[l] = uint32(l)
	}
	held := [][]uint32{{0, 1, 2}, {1, 2, 3}, {0, 3}}
	prices := []uint64{3, 5, 7}
	n := 0
	roles := func(c *Config) {
		if n == 0 { // the serving provider
			c.Provider.Models = []ModelConfig{{Name: provider.DevnetMoEModelName, Dir: dir, ID: id, Engine: provider.EngineEmbedded}}
			c.Provider.RemoteExperts.Models = []string{provider.DevnetMoEModelName}
			// Generous: payments are checked against what holders computed,
			// so no batch may be retired for slowness on a loaded machine.
			c.Provider.RemoteExperts.Timeout = 30 * time.Second
		} else {
			c.Provider.Models = nil
			c.Provider.Experts = []provider.ExpertConfig{{Model: id, Dir: dir, Layers: layers, Experts: held[n-1], PricePerToken: prices[n-1]}}
		}
		n++
	}
	// No probes: the validator's paid probes of the MoE model would pay
	// the holders too while the test compares.
	net := newChainNetWith(t, 1, 4, 0, testChainParams(3600), chainExtra{provOpts: []func(*Config){roles}, selfEscrow: true},
		func(c *Config) { c.Router.ProbeInterval = 0 })
	c := net.validators[0].Chain()
	serving, holders := net.registered[0], net.registered[1:]
	nodetest.Eventually(t, 60*time.Second, "every provider registered", func() bool {
		for _, p := range net.registered {
			if _, ok, err := c.Provider(context.Background(), p.id.MachineID()); err != nil || !ok {
				return false
			}
		}
		return true
	})
	var mid [32]byte
	b, _ := hex.DecodeString(id)
	copy(mid[:], b)
	nodetest.Eventually(t, 30*time.Second, "every expert at two holders", func() bool {
		for l := range o.Layers {
			for e := range o.Experts {
				if len(serving.Provider().ExpertHolders(mid, l, e)) != 2 {
					return false
				}
			}
		}
		return true
	})
	waitWarm(t, serving)

	payer := accountKey(t, serving.Config())
	escrow0 := escrowBalance(t, c, payer, payer)
	ops := make([]consensus.AccountID, len(holders))
	bal0 := make([]uint64, len(holders))
	for i, h := range holders {
		ops[i] = accountKey(t, h.Config())
		bal0[i] = accountBalance(t, c, ops[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(serving.APIURL()+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	for i := range 3 {
		params := openai.ChatCompletionNewParams{
			Model:     provider.DevnetMoEModelName,
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("Question %d about markets", i))},
			MaxTokens: openai.Int(8),
		}
		if _, err := client.Chat.Completions.New(ctx, params); err != nil {
			t.Fatal(err)
		}
	}
	// What each holder computed, verified by the caller: no failures.
	if st := serving.Provider().ExpertCallerStats()[provider.DevnetMoEModelName]; len(st.Failures) != 0 {
		t.Fatalf("caller failures %v", st.Failures)
	}
	// Every row a holder computed is paid: the calls' and those of sampled
	// batches the serving node re-executed at it in the background, so
	// the holders' counts are read afresh until the payments catch up.
	want := make([]uint64, len(holders))
	var total uint64
	nodetest.Eventually(t, 3*time.Minute, "every holder paid its expert-tokens × price on chain", func() bool {
		total = 0
		for i, h := range holders {
			st, _ := h.Provider().ExpertServerStats()
			want[i] = st.Rows * prices[i]
			total += want[i]
			if want[i] == 0 {
				t.Fatalf("holder %d computed nothing", i)
			}
		}
		for i := range holders {
			if accountBalance(t, c, ops[i])-bal0[i] != want[i] {
				return false
			}
		}
		return true
	})
	if got := escrow0 - escrowBalance(t, c, payer, payer); got != total {
		t.Fatalf("the serving provider's escrow fell by %d, holders were paid %d", got, total)
	}
}
