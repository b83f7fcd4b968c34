package node

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// TestExpertHoldersPaidOnChain: a registered provider serving the devnet
// MoE model with its experts at three registered holders pays each holder,
// from its own escrow, exactly the expert-tokens it computed times its
// price, settled on chain in the background. Every answer, through a
// gateway (stream and non-stream) or the provider's own route, lists the
// holders in tenzro.experts: their expert-tokens add up to the receipt's,
// which the gateway bills at the provider's expert-token rate, and each
// holder's paid is its expert-tokens × its price, signed to it.
func TestExpertHoldersPaidOnChain(t *testing.T) {
	m := newDevnetMoE(t)
	held := [][]uint32{{0, 1, 2}, {1, 2, 3}, {0, 3}}
	prices := []uint64{3, 5, 7}
	n := 0
	roles := func(c *Config) {
		if n == 0 {
			m.serve(c)
		} else {
			m.hold(c, held[n-1], prices[n-1])
		}
		n++
	}
	// No probes: the validator's paid probes of the MoE model would pay
	// the holders too while the test compares.
	net := newChainNetWith(t, 1, 4, 0, testChainParams(3600), chainExtra{provOpts: []func(*Config){roles}, selfEscrow: true},
		func(c *Config) { c.Router.ProbeInterval = 0 })
	c := net.validators[0].Chain()
	serving, holders := net.registered[0], net.registered[1:]
	m.waitReady(t, net, serving, 2)
	mid := m.mid

	payer := accountKey(t, serving.Config())
	escrow0 := escrowBalance(t, c, payer, payer)
	ops := make([]terms.AccountID, len(holders))
	bal0 := make([]uint64, len(holders))
	for i, h := range holders {
		ops[i] = accountKey(t, h.Config())
		bal0[i] = accountBalance(t, c, ops[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	priceOf := map[string]uint64{}
	for i, h := range holders {
		priceOf[h.Host().ID().String()] = prices[i]
	}
	gw := net.validators[0]
	// Listed is not enough: the serving provider must be up, warm and
	// registered in the gateway's view of the chain, or the first call is
	// answered 503 no_provider (seen in CI).
	nodetest.Eventually(t, 30*time.Second, "the gateway routes the MoE model to a warm provider", func() bool {
		listed := false
		for _, m := range gw.gateway.Models(ctx) {
			listed = listed || slices.Contains(m.Names, provider.DevnetMoEModelName)
		}
		for _, o := range gw.Table().Offers(provider.DevnetMoEModelName) {
			if listed && o.Status == router.StatusUp && o.State == gossip.StateWarm && !o.Unregistered {
				return true
			}
		}
		return false
	})
	var listed uint64 // Σ expert-tokens of every answer's receipt
	for i, via := range []struct {
		n      *Node
		stream bool
	}{{gw, false}, {gw, true}, {serving, false}} {
		params := openai.ChatCompletionNewParams{
			Model:     provider.DevnetMoEModelName,
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("Question %d about markets", i))},
			MaxTokens: openai.Int(8),
		}
		tz := moeAnswer(t, ctx, via.n, via.stream, params)
		var sum uint64
		for _, e := range tz.Experts {
			price, ok := priceOf[e.Holder]
			if !ok || e.Price != price || e.ExpertTokens == 0 || e.Batches == 0 || e.Paid != e.ExpertTokens*price || len(e.Record) != 64 || e.Reason != "" {
				t.Fatalf("answer %d: holder entry %+v (price %d)", i, e, price)
			}
			sum += e.ExpertTokens
		}
		listed += sum
		if via.n == serving {
			continue // no gateway: no receipt in the answer
		}
		if tz.Receipt == nil || !tz.Receipt.Verified || tz.Receipt.Receipt.Units.ExpertTokens != sum || sum == 0 {
			t.Fatalf("answer %d: holders list %d expert-tokens, receipt %+v", i, sum, tz.Receipt)
		}
		// Billed uncapped (the devnet shape bounds 2 × 4 × tokens) at the
		// provider's rate.
		if tz.Payment == nil || tz.Payment.Units.ExpertTokens != sum || tz.Payment.Breakdown.ExpertTokens != sum*expertRate || len(tz.Receipt.Capped) != 0 {
			t.Fatalf("answer %d: payment %+v, capped %v", i, tz.Payment, tz.Receipt.Capped)
		}
	}
	// The answers account for every row the serving node had computed at
	// holders for calls.
	if st := serving.Provider().ExpertCallerStats()[provider.DevnetMoEModelName]; st.ExpertTokens != listed {
		t.Fatalf("answers list %d expert-tokens, the caller verified %d", listed, st.ExpertTokens)
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
	checkBindings(t, c, serving, mid)
}

// checkBindings: the serving provider disputes its evidence on chain, and
// every receipt with a batch it sampled during a call is bound to the
// record that paid the holder for the call, settled on chain, so a batch
// found wrong there can be disputed.
// The chain read is c's, where the payments were seen: the serving
// node's own may be a block behind.
func checkBindings(t *testing.T, c *consensus.Node, serving *Node, model [32]byte) {
	t.Helper()
	if _, ok := serving.Provider().ExpertDisputeStats()[model]; !ok {
		t.Fatal("the serving provider runs no disputer of the model's evidence")
	}
	sampled := serving.Provider().ExpertCallerStats()[provider.DevnetMoEModelName].Sampled
	s, err := expert.OpenSampleStore(filepath.Join(serving.Config().Path("experts/bindings"), hex.EncodeToString(model[:8])), 0)
	if err != nil {
		t.Fatal(err)
	}
	names, err := s.List()
	if err != nil || (sampled > 0) != (len(names) > 0) || uint64(len(names)) > sampled {
		t.Fatalf("%d batches sampled in calls, %d bindings (%v)", sampled, len(names), err)
	}
	for _, name := range names {
		data, err := s.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := expert.DecodeBinding(data)
		if err != nil {
			t.Fatalf("binding %s: %v", name, err)
		}
		if _, ok, err := c.Record(context.Background(), b.Payer, b.RequestDigest); err != nil || !ok {
			t.Fatalf("binding %s names record %s of %s, not settled (%v)", name, b.RequestDigest, b.Payer, err)
		}
	}
	t.Logf("%d batches sampled in calls, %d receipts bound to settled records", sampled, len(names))
}

// expertRate is the serving provider's price per expert-token in the
// chain test.
const expertRate = 2

// moeTenzro is the part of a MoE answer's tenzro object the expert
// tests read.
type moeTenzro struct {
	Receipt *struct {
		Verified bool     `json:"verified"`
		Capped   []string `json:"capped"`
		Receipt  struct {
			Units terms.Units `json:"units"`
		} `json:"receipt"`
	} `json:"receipt"`
	Payment *struct {
		Units     terms.Units     `json:"units"`
		Breakdown terms.Breakdown `json:"breakdown"`
	} `json:"payment"`
	Experts []struct {
		Holder       string `json:"holder"`
		Machine      string `json:"machine"`
		Batches      uint64 `json:"batches"`
		ExpertTokens uint64 `json:"expert_tokens"`
		Price        uint64 `json:"price"`
		Paid         uint64 `json:"paid"`
		Reason       string `json:"reason"`
		Record       string `json:"record"`
	} `json:"experts"`
}

// moeAnswer asks n for a chat completion (a gateway with the test
// buyer's token) and returns the answer's tenzro object: the response's,
// or the stream's last that carries one (its final chunks).
func moeAnswer(t *testing.T, ctx context.Context, n *Node, stream bool, params openai.ChatCompletionNewParams) moeTenzro {
	t.Helper()
	client := sdkClient(n, testToken)
	var raws []string
	if stream {
		s := client.Chat.Completions.NewStreaming(ctx, params)
		for s.Next() {
			raws = append(raws, s.Current().RawJSON())
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	} else {
		full, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			var ae *openai.Error
			if errors.As(err, &ae) {
				t.Fatalf("%v: %s", err, ae.RawJSON())
			}
			t.Fatal(err)
		}
		raws = []string{full.RawJSON()}
	}
	for i := len(raws) - 1; i >= 0; i-- {
		var b struct {
			Tenzro *moeTenzro `json:"tenzro"`
		}
		if err := json.Unmarshal([]byte(raws[i]), &b); err != nil {
			t.Fatal(err)
		}
		if b.Tenzro != nil {
			if len(b.Tenzro.Experts) == 0 {
				t.Fatalf("no tenzro.experts in %s", raws[i])
			}
			return *b.Tenzro
		}
	}
	t.Fatalf("no tenzro object in %d chunks", len(raws))
	return moeTenzro{}
}
