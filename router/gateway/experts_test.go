package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"math"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	dto "github.com/prometheus/client_model/go"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// holderUse is one expert holder's unpaid part of expertTokens rows.
func holderUse(t *testing.T, m *market, expertTokens uint64) []infer.ExpertUse {
	t.Helper()
	return []infer.ExpertUse{{Holder: []byte(m.provs[0].id), Machine: bytes.Repeat([]byte{1}, 32), Batches: 2,
		ExpertTokens: expertTokens, Price: 1, Unpaid: infer.UnpaidOffChain}}
}

// TestBillCapsExpertTokens: a MoE offer's expert-tokens are quoted at
// their bound and billed at the rate card's price as the receipt claims
// them, at most top-k × MoE layers × the billed tokens: a provider
// claiming more is billed the bound (named in capped, counted), one whose
// offer states no MoE shape is billed none, and the buyer sees the
// holders only when they add up to the receipt.
func TestBillCapsExpertTokens(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		var m *market
		claims := []struct {
			experts, listed uint64
			unsigned        bool
		}{{20, 20, false}, {1000, 1000, false}, {20, 19, false}, {20, 20, true}, {20, 20, false}}
		m = newMarket(t, st, 1, testConfig(), func(n int, _ *infer.Request) script {
			c := claims[min(n, len(claims)-1)]
			return script{first: ms, gap: ms, tokens: []string{"ab", "cd"}, experts: c.experts, holders: holderUse(t, m, c.listed), unsignedHolders: c.unsigned}
		})
		moe := gossip.ModelOffer{ModelID: modelID, Name: modelName, MoE: &gossip.MoEShape{Layers: 2, TopK: 2},
			RateCard:     terms.RateCard{InputTokens: 1, OutputTokens: 10, ExpertTokens: 3},
			Verification: []terms.Verification{terms.VerifyNone}}
		m.announceOffer(m.provs[0], moe)

		// The quote prices the bound on the request's estimate: 2 × 2 ×
		// (6 input bytes + 16 max_tokens) expert-tokens.
		_, choices, err := m.gw.candidates(context.Background(), request())
		if err != nil {
			t.Fatal(err)
		}
		if q := choices[m.provs[0].id].quote; q.Units.ExpertTokens != 88 || q.Breakdown.ExpertTokens != 264 {
			t.Fatalf("quote units %+v breakdown %+v", q.Units, q.Breakdown)
		}

		// Billed tokens: 5 input + 2 output, so at most 28 expert-tokens.
		res := mustRoute(t, m, request())
		if u := res.Payment.Units; u.ExpertTokens != 20 || res.Payment.Breakdown.ExpertTokens != 60 || slices.Contains(res.Receipt.Capped, CappedExperts) {
			t.Fatalf("honest claim billed %+v, capped %v", u, res.Receipt.Capped)
		}
		if len(res.Experts) != 1 || res.Experts[0].ExpertTokens != 20 || peer.ID(res.Experts[0].Holder) != m.provs[0].id {
			t.Fatalf("experts shown %+v", res.Experts)
		}
		if h, _ := infer.ExpertsHash(res.Experts); res.Receipt.Receipt.ExpertsHash != hex.EncodeToString(h[:]) {
			t.Fatalf("receipt view's experts hash %q", res.Receipt.Receipt.ExpertsHash)
		}
		if res.Payment.Price != 5*1+2*10+60 {
			t.Fatalf("price %d", res.Payment.Price)
		}

		res = mustRoute(t, m, request())
		if u := res.Payment.Units; u.ExpertTokens != 28 || !slices.Contains(res.Receipt.Capped, CappedExperts) {
			t.Fatalf("greedy claim billed %+v, capped %v", u, res.Receipt.Capped)
		}
		if res.Receipt.Receipt.Units.ExpertTokens != 1000 || len(res.Experts) != 1 {
			t.Fatalf("the receipt's claim %+v, experts %+v", res.Receipt.Receipt.Units, res.Experts)
		}

		res = mustRoute(t, m, request())
		if res.Experts != nil || res.Payment.Units.ExpertTokens != 20 {
			t.Fatalf("holders not adding up to the receipt shown: %+v", res.Experts)
		}
		res = mustRoute(t, m, request())
		if res.Experts != nil || res.Payment.Units.ExpertTokens != 20 {
			t.Fatalf("holders the receipt does not sign shown: %+v", res.Experts)
		}

		// The same offer without its MoE shape backs no expert-tokens.
		moe.MoE = nil
		m.announceOffer(m.provs[0], moe)
		res = mustRoute(t, m, request())
		if u := res.Payment.Units; u.ExpertTokens != 0 || !slices.Contains(res.Receipt.Capped, CappedExperts) {
			t.Fatalf("no shape: billed %+v, capped %v", u, res.Receipt.Capped)
		}
		var d dto.Metric
		if err := m.gw.metrics.expertsCapped.Write(&d); err != nil || d.GetCounter().GetValue() != 2 {
			t.Fatalf("capped counted %v times (%v)", d.GetCounter().GetValue(), err)
		}
	})
}

// TestBillExpertTokensByHeldModel: a gateway holding the model (its
// tokenizer and metadata) bounds expert-tokens by the model file's own
// MoE shape, not by the shape the provider announces.
func TestBillExpertTokensByHeldModel(t *testing.T) {
	o := modelgen.DevnetOptions()
	o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 2, 64, 4, 2, 128, 600, 512
	o.MoE, o.Experts, o.ExpertsUsed = true, 4, 1
	dir := t.TempDir()
	if err := modelgen.GenerateModel(dir, o); err != nil {
		t.Fatal(err)
	}
	_, root, err := catalog.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := llm.OpenTokenizer(dir, inference.ModelID(root))
	if err != nil {
		t.Fatal(err)
	}
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		var m *market
		m = newMarket(t, st, 1, testConfig(), func(int, *infer.Request) script {
			return script{first: ms, gap: ms, tokens: []string{"ab", "cd"}, experts: 1000, holders: holderUse(t, m, 1000)}
		})
		gw, err := New(testConfig(), Deps{Transport: m.tr, Table: m.table, Ledger: st,
			Tokenizers: map[inference.ModelID]TokenCounter{inference.ModelID(modelID): pt}})
		if err != nil {
			t.Fatal(err)
		}
		m.gw = gw
		// The provider claims 8 layers × top-4; the file says 2 × top-1.
		m.announceOffer(m.provs[0], gossip.ModelOffer{ModelID: modelID, Name: modelName, MoE: &gossip.MoEShape{Layers: 8, TopK: 4},
			RateCard: terms.RateCard{InputTokens: 1, ExpertTokens: 1}, Verification: []terms.Verification{terms.VerifyNone}})
		res := mustRoute(t, m, request())
		u := res.Payment.Units
		if want := 2 * (u.InputTokens + u.CachedTokens + u.OutputTokens); u.ExpertTokens != want || want == 0 || !slices.Contains(res.Receipt.Capped, CappedExperts) {
			t.Fatalf("billed %+v (want %d expert-tokens), capped %v", u, want, res.Receipt.Capped)
		}
	})
}

// TestCapExperts: the bound counts prompt, output and a continuation's
// earlier tokens; no shape bounds at 0; an overflowing bound is none.
func TestCapExperts(t *testing.T) {
	shape := &gossip.MoEShape{Layers: 4, TopK: 2}
	billed := pricing.Units{InputTokens: 3, CachedTokens: 2, OutputTokens: 5}
	for _, tc := range []struct {
		name          string
		claimed, cont uint64
		shape         *gossip.MoEShape
		want          uint64
		capped        bool
	}{
		{"within", 80, 0, shape, 80, false},
		{"above", 81, 0, shape, 80, true},
		{"continuation fed too", 120, 5, shape, 120, false},
		{"no shape", 1, 0, nil, 0, true},
		{"nothing claimed", 0, 0, nil, 0, false},
		{"overflowing bound", math.MaxUint64, math.MaxUint64, shape, math.MaxUint64, false},
	} {
		got, capped := capExperts(tc.claimed, tc.shape, billed, tc.cont)
		if got != tc.want || capped != tc.capped {
			t.Errorf("%s: %d capped %v, want %d %v", tc.name, got, capped, tc.want, tc.capped)
		}
	}
	if n := continuationTokens(&infer.Request{Continuation: "abcd", ContinuationTokens: []int{1, 2}}); n != 4 {
		t.Fatalf("continuation bound %d", n)
	}
}
