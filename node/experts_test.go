package node

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/openai/openai-go/v3"

	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/p2p/infer"
)

// TestRemoteExpertsAcrossHolders runs the devnet MoE model at a provider
// whose experts are held by three other providers (each expert at two of
// them), found through their announcements: its answers equal those of a
// provider running the same model locally, stream and non-stream, same
// seed, and the experts were computed at the holders.
func TestRemoteExpertsAcrossHolders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "moe")
	id, err := provider.EnsureDevnetMoEModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	model := provider.ModelConfig{Name: provider.DevnetMoEModelName, Dir: dir, ID: id, Engine: provider.EngineEmbedded}

	localCfg := testConfig(t, RoleProvider, "software", nil)
	localCfg.Provider.Models = []ModelConfig{model}
	local := waitWarm(t, startNode(t, localCfg))

	servingCfg := testConfig(t, RoleProvider, "software", nil)
	servingCfg.Provider.Models = []ModelConfig{model}
	servingCfg.Provider.RemoteExperts.Models = []string{provider.DevnetMoEModelName}
	// Generous: on a loaded test machine a holder may be slow, and this
	// test wants every batch at its first choice.
	servingCfg.Provider.RemoteExperts.Timeout = 30 * time.Second
	serving := waitWarm(t, startNode(t, servingCfg))

	o := modelgen.DevnetOptions()
	layers := make([]uint32, o.Layers)
	for l := range layers {
		layers[l] = uint32(l)
	}
	var holders []*Node
	for _, experts := range [][]uint32{{0, 1, 2}, {1, 2, 3}, {0, 3}} {
		cfg := testConfig(t, RoleProvider, "software", serving.Host().Addrs()[:1])
		cfg.Provider.Models = nil
		cfg.Provider.Experts = []provider.ExpertConfig{{Model: id, Dir: dir, Layers: layers, Experts: experts, PricePerToken: 3}}
		holders = append(holders, startNode(t, cfg))
	}
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

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// One DHT record per (model, layer, expert): expert 0 is held by the
	// first and third holders only.
	nodetest.Eventually(t, 30*time.Second, "the holders of expert 0 of layer 3 found in the DHT", func() bool {
		found, _ := serving.Host().FindModelProviders(ctx, expert.Key(mid, 3, 0), 10)
		got := map[peer.ID]bool{}
		for _, ai := range found {
			got[ai.ID] = true
		}
		return len(found) == 2 && got[holders[0].Host().ID()] && got[holders[2].Host().ID()]
	})
	params := openai.ChatCompletionNewParams{
		Model:     provider.DevnetMoEModelName,
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me about open markets")},
		MaxTokens: openai.Int(16),
		Seed:      openai.Int(5),
	}
	params.Temperature = openai.Float(0.8)
	answer := func(n *Node, stream bool) string {
		client := sdkClient(n, "unused")
		if !stream {
			full, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			return full.Choices[0].Message.Content
		}
		acc, _ := streamChat(t, ctx, client, params)
		return acc.Choices[0].Message.Content
	}
	want := answer(local, false)
	if want == "" {
		t.Fatal("empty local answer")
	}
	for _, stream := range []bool{false, true} {
		if got := answer(serving, stream); got != want {
			t.Fatalf("stream=%v: remote experts answered %q, locally %q", stream, got, want)
		}
	}
	// Off chain nothing is signed to the holders: each is listed with its
	// work, paid 0 and the reason.
	tz := moeAnswer(t, ctx, serving, true, params)
	for _, e := range tz.Experts {
		if e.Paid != 0 || e.Reason != infer.UnpaidOffChain || e.Record != "" || e.ExpertTokens == 0 || e.Price != 3 {
			t.Fatalf("off-chain holder entry %+v", e)
		}
	}
	st := serving.Provider().ExpertCallerStats()[provider.DevnetMoEModelName]
	if st.Exchanges == 0 || len(st.Failures) != 0 || st.NoHolder != 0 {
		t.Fatalf("caller stats %+v", st)
	}
	// Holders computed the rows of the calls and those of the sampled
	// batches the serving node has re-executed at them so far (in the
	// background: the two counts agree once a re-execution in flight
	// has ended).
	var rows uint64
	nodetest.Eventually(t, 30*time.Second, "holders' rows equal the caller's verified and re-executed rows", func() bool {
		rows = 0
		for _, h := range holders {
			hs, ok := h.Provider().ExpertServerStats()
			if !ok {
				t.Fatal("holder holds no experts")
			}
			rows += hs.Rows
		}
		st = serving.Provider().ExpertCallerStats()[provider.DevnetMoEModelName]
		return rows == st.ExpertTokens+st.RedoTokens
	})
	// The serving node samples with a secret of its own, kept in its
	// home, and honest holders leave no dispute evidence.
	if fi, err := os.Stat(filepath.Join(servingCfg.Home, "experts", "sample.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sampling secret not kept in the home at mode 0600: %v", err)
	}
	if rs, ok := serving.Provider().ExpertRecheckStats()[mid]; !ok || rs.Mismatched != 0 {
		t.Fatalf("recheck of the model's samples: %+v (running %v)", rs, ok)
	}
	if ev, err := serving.Provider().ExpertEvidence(mid); err != nil || len(ev) != 0 {
		t.Fatalf("honest holders left %d evidence (%v)", len(ev), err)
	}
}
