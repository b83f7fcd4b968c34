package commit_test

import (
	"context"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/commit/committest"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// costPrompts and costTokens are the prompts and answer length of every
// model of BenchmarkVerifyVsGenerate (named by TENZRO_COMMIT_MODELS, see
// committest.BenchModels), so that their ratios compare like for like.
const (
	costPrompts = 20
	costTokens  = 64
)

// costRequest is the request of prompt i: the same mix of greedy and
// sampled decoding as the detection experiment, with the top-k log-probs a
// commitment needs.
func costRequest(i int, prompt string, maxTokens int) inference.GenerateRequest {
	return inference.GenerateRequest{
		Messages: []inference.Message{{Role: "user", Content: prompt}},
		Sampling: inference.Sampling{Temperature: []float64{0, 0.7, 1}[i%3], TopP: 0.95, Seed: uint64(i), MaxTokens: maxTokens},
		LogProbs: commit.TopK,
	}
}

// BenchmarkVerifyVsGenerate times, per model, generating committed answers
// (decoding with top-k log-probs plus building the proofs) against
// verifying them by one prefill (committest.VerifyWithEngine), both on 2
// threads with 64-token prefill batches, interleaved prompt by prompt so
// that both see the same machine load. It fails if an honest answer is
// flagged or an answer checked against another prompt passes. Metrics:
// gen-ms/prompt, verify-ms/prompt, verify/gen (time ratio), x-faster (its
// inverse; issue #16 wants ≥ 5), x-faster-greedy (the same over the
// greedy prompts only) and committee-share (k × verify/gen for the
// governed committee size k: a dispute's re-executions as a share of the
// job's price at the provider's rate per compute second).
func BenchmarkVerifyVsGenerate(b *testing.B) {
	for _, m := range committest.BenchModels(b, "TENZRO_COMMIT_MODELS") {
		b.Run(m.Name, func(b *testing.B) { benchVerifyVsGenerate(b, m.Opts) })
	}
}

func benchVerifyVsGenerate(b *testing.B, o modelgen.GenOptions) {
	// One engine both generates and verifies: Score has its own KV cache,
	// and a second copy of the weights would only cost memory.
	e := openModel(b, b.TempDir()+"/model", o, llm.Options{Threads: 2, PrefillChunk: 64})
	ctx := context.Background()
	ps := prompts(costPrompts)
	// Greedy prompts (every third) are timed apart too: greedy decoding
	// skips the sampler's sort of the vocabulary, so it is the cheapest
	// generation to compare with.
	var gen, ver, genGreedy, verGreedy time.Duration
	var runs, tokens, flagged int
	for b.Loop() {
		for i, p := range ps {
			genBefore, verBefore := gen, ver
			t0 := time.Now()
			res, _, proofs := committest.Generate(b, e, costRequest(i, p, costTokens))
			gen += time.Since(t0)
			if len(res.Tokens) == 0 {
				b.Fatalf("prompt %d: empty answer", i)
			}
			t0 = time.Now()
			rep, err := committest.VerifyWithEngine(ctx, e, res.Prompt, res.Tokens, proofs, commit.DefaultTolerance)
			ver += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if !rep.OK {
				b.Fatalf("prompt %d: honest answer flagged: %+v", i, rep.Chunks)
			}
			if i%3 == 0 {
				genGreedy += gen - genBefore
				verGreedy += ver - verBefore
			}
			b.StopTimer()
			flagged += changedPromptFlagged(b, e, ps[(i+1)%len(ps)], res.Tokens, proofs)
			b.StartTimer()
			runs++
			tokens += len(res.Tokens)
		}
	}
	if flagged != runs {
		b.Fatalf("changed prompt: only %d of %d detected", flagged, runs)
	}
	b.ReportMetric(ms(gen)/float64(runs), "gen-ms/prompt")
	b.ReportMetric(ms(ver)/float64(runs), "verify-ms/prompt")
	b.ReportMetric(float64(tokens)/float64(runs), "tokens/answer")
	b.ReportMetric(float64(ver)/float64(gen), "verify/gen")
	b.ReportMetric(float64(gen)/float64(ver), "x-faster")
	b.ReportMetric(float64(genGreedy)/float64(verGreedy), "x-faster-greedy")
	// A dispute's committee of k re-executes the answer k times: at the
	// provider's own rate per compute second, that is this share of the
	// job's price (node/validator's BenchmarkCommitteeCost prices it).
	b.ReportMetric(float64(ledger.DefaultParams().DisputeCommittee)*float64(ver)/float64(gen), "committee-share")
}

// changedPromptFlagged reports (as 0 or 1) whether proofs of an answer
// fail against another prompt, a check that the timed verifications
// would catch a lie on this model too.
func changedPromptFlagged(b *testing.B, e *llm.Engine, prompt string, output []int, proofs []commit.Proof) int {
	changed, err := e.EncodePrompt(inference.GenerateRequest{Messages: []inference.Message{{Role: "user", Content: prompt}}})
	if err != nil {
		b.Fatal(err)
	}
	rep, err := committest.VerifyWithEngine(context.Background(), e, changed, output, proofs, commit.DefaultTolerance)
	if err != nil {
		b.Fatal(err)
	}
	if rep.OK {
		return 0
	}
	return 1
}
