package validator

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// costAnswers is how many answers BenchmarkCommitteeCost prices: the mix
// of generateAnswer (greedy and sampled, 8 to 48 tokens).
const costAnswers = 20

// BenchmarkCommitteeCost prices a dispute's committee against the
// disputed job, on the devnet model with one thread for both sides.
// Per answer it times what the provider did (decode with top-k log-probs,
// build the proofs) and what one member does (judge: receipt and input
// checks, the tokens against the signed output, one prefill, Verify).
// The committee's cost is k members' re-execution priced at the
// provider's own rate per compute second (the job's price over its
// generation time), so as a share of the job's price it is k × judge /
// generate, k the governed committee size; a redrawn round costs 2k+1
// more. The chain's side is 2k vote transactions and the open, at the
// governed FeePerTx. Metrics: gen-ms/answer, judge-ms/answer, x-cheaper,
// committee-share (k members, first round), price-µ/answer (the devnet
// rate card at optimistic), committee-µ/answer, fees-µ/dispute.
func BenchmarkCommitteeCost(b *testing.B) {
	eng := openGenerated(b, filepath.Join(b.TempDir(), "m"), modelgen.DevnetOptions())
	m, err := testnet.NewMachine(filepath.Join(b.TempDir(), "machine"), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	params := consensus.DefaultParams()
	card := provider.DevnetModel("", "").RateCard
	sur := pricing.Surcharges{Optimistic: params.SurchargeOptimistic}
	ctx := context.Background()
	var gen, judged time.Duration
	var price uint64
	runs := 0
	for b.Loop() {
		for i := range costAnswers {
			t0 := time.Now()
			a := generateAnswer(b, eng, 200+i)
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
			t0 = time.Now()
			v, why, err := judge(ctx, eng, ev, commit.DefaultTolerance)
			judged += time.Since(t0)
			if err != nil || v != ledger.VerdictInnocent {
				b.Fatalf("answer %d: %s (%s) %v", i, v, why, err)
			}
			runs++
		}
	}
	k := float64(params.DisputeCommittee)
	share := k * float64(judged) / float64(gen)
	perAnswer := float64(price) / float64(runs)
	b.ReportMetric(ms(gen)/float64(runs), "gen-ms/answer")
	b.ReportMetric(ms(judged)/float64(runs), "judge-ms/answer")
	b.ReportMetric(float64(gen)/float64(judged), "x-cheaper")
	b.ReportMetric(share, "committee-share")
	b.ReportMetric(perAnswer, "price-µ/answer")
	b.ReportMetric(share*perAnswer, "committee-µ/answer")
	b.ReportMetric(float64((2*params.DisputeCommittee+1)*params.FeePerTx), "fees-µ/dispute")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// inferenceRequest is the generation request of a disputed input.
func inferenceRequest(in DisputeInput) inference.GenerateRequest {
	return inference.GenerateRequest{Messages: in.Messages, Prompt: in.Prompt, Sampling: in.Sampling}
}
