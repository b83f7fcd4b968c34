package validator

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/commit/committest"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkCommitteeCost prices a dispute's committee against the
// disputed job. Per answer (TENZRO_COMMITTEE_ANSWERS answers, default 4,
// of up to TENZRO_COMMITTEE_TOKENS tokens, default 128) it times what the
// provider did (decode with top-k log-probs, build the proofs) and what
// one member does (judge: the receipt and input checks, one prefill of the
// prompt and the answer up to the disputed chunk's end, Verify and the
// sampler check of that chunk), for a dispute naming the first chunk
// (where every cheat of the detection experiment fails) and one naming
// the last (the costliest a false disputer can name). Both sides run on
// 2 threads. The committee's cost is k members' judging priced at the
// provider's own rate per compute second (the job's price over its
// generation time): as a share of the price, k × judge / generate, k the
// governed committee size. The price is the devnet rate card at
// optimistic with the chain's surcharge. Metrics: gen-ms, judge-first-ms,
// judge-last-ms, committee-%-first, committee-%-last, price-µ,
// bond-first-µ and bond-last-µ (the least dispute bonds), tokens (per
// answer).
func BenchmarkCommitteeCost(b *testing.B) {
	// TENZRO_COMMITTEE_MODELS names the models (committest.BenchModels);
	// scripts/bench-disputes asks for the 100M one.
	for _, m := range committest.BenchModels(b, "TENZRO_COMMITTEE_MODELS") {
		b.Run(m.Name, func(b *testing.B) { benchCommitteeCost(b, m.Opts) })
	}
}

func benchCommitteeCost(b *testing.B, o modelgen.GenOptions) {
	dir := b.TempDir()
	if err := modelgen.GenerateModel(filepath.Join(dir, "m"), o); err != nil {
		b.Fatal(err)
	}
	eng, err := llm.Open(filepath.Join(dir, "m"), llm.Options{Threads: 2, PrefillChunk: 64})
	if err != nil {
		b.Fatal(err)
	}
	m := testMachine(b, filepath.Join(dir, "machine"))
	params := ledger.DefaultParams()
	card := provider.DevnetModel("", "").RateCard
	sur := pricing.Surcharges{Optimistic: params.SurchargeOptimistic}
	answers, maxTokens := envInt("TENZRO_COMMITTEE_ANSWERS", 4), envInt("TENZRO_COMMITTEE_TOKENS", 128)
	ctx := context.Background()
	var gen, first, last time.Duration
	var price, bond, lastBond uint64
	runs, tokens := 0, 0
	for b.Loop() {
		for i := range answers {
			in := detectionInput(1+i, maxTokens)
			in.Sampling.Temperature = 0.8 // sampled: no answer ends early by greedy repetition
			t0 := time.Now()
			a := generate(b, eng, in)
			gen += time.Since(t0)
			b.StopTimer()
			ev := signAnswer(b, m, eng.Info().ID, make([]byte, 16), a)
			prompt, err := eng.EncodePrompt(inferenceRequest(a.in))
			if err != nil {
				b.Fatal(err)
			}
			bd, err := pricing.Price(card, terms.Units{InputTokens: uint64(len(prompt)), OutputTokens: uint64(len(a.tokens))}, terms.VerifyOptimistic, sur)
			if err != nil {
				b.Fatal(err)
			}
			price += bd.Total
			b.StartTimer()
			for _, c := range []struct {
				chunk int
				d     *time.Duration
			}{{0, &first}, {len(a.proofs) - 1, &last}} {
				ev.Chunk = uint32(c.chunk)
				if c.chunk == 0 {
					bond += ledger.DisputeBond(params, bd.Total, 0)
				} else {
					lastBond += ledger.DisputeBond(params, bd.Total, ev.Chunk)
				}
				t0 = time.Now()
				v, why, err := judge(ctx, eng, ev, commit.DefaultTolerance)
				*c.d += time.Since(t0)
				if err != nil || v != ledger.VerdictInnocent {
					b.Fatalf("answer %d chunk %d: %s (%s) %v", i, c.chunk, v, why, err)
				}
			}
			runs++
			tokens += len(a.tokens)
		}
	}
	k := float64(params.DisputeCommittee)
	n := float64(runs)
	b.ReportMetric(ms(gen)/n, "gen-ms")
	b.ReportMetric(ms(first)/n, "judge-first-ms")
	b.ReportMetric(ms(last)/n, "judge-last-ms")
	b.ReportMetric(100*k*float64(first)/float64(gen), "committee-%-first")
	b.ReportMetric(100*k*float64(last)/float64(gen), "committee-%-last")
	b.ReportMetric(float64(price)/n, "price-µ")
	b.ReportMetric(float64(bond)/n, "bond-first-µ")
	b.ReportMetric(float64(lastBond)/n, "bond-last-µ")
	b.ReportMetric(float64(tokens)/n, "tokens")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// inferenceRequest is the generation request of a disputed input.
func inferenceRequest(in DisputeInput) inference.GenerateRequest {
	return inference.GenerateRequest{Messages: in.Messages, Prompt: in.Prompt, Sampling: in.Sampling}
}
