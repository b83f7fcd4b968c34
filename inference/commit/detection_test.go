package commit_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/commit/committest"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// experimentOptions is the model, prompt count and output length of the
// detection experiment: 12 prompts on a tiny model by default (the make
// test run, ~20 s under the race detector on 2 cores), 200 with
// TENZRO_DETECTION=1, and 200 prompts on the devnet model with
// TENZRO_DETECTION=devnet (scripts/bench-disputes and bench-commit run
// those).
func experimentOptions() (modelgen.GenOptions, int, int) {
	o := modelgen.DevnetOptions()
	switch os.Getenv("TENZRO_DETECTION") {
	case "devnet":
		return o, 200, 96
	case "":
		o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 2, 64, 4, 2, 128, 600, 512
		if testing.Short() {
			return o, 6, 64
		}
		return o, 12, 64
	}
	o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 2, 64, 4, 2, 128, 600, 512
	return o, 200, 64
}

func prompts(n int) []string {
	subjects := []string{"the weather", "a small town", "markets", "music", "the history of science", "cooking soup", "learning a language", "a long train ride", "the forest", "building a house"}
	asks := []string{"Tell me about %s.", "Write a short story about %s.", "What do you know about %s?", "Explain %s to a child.", "Give three facts about %s.", "Why do people care about %s?", "Describe %s in one sentence.", "Write a poem about %s.", "What is surprising about %s?", "Summarise %s."}
	var out []string
	for i := 0; len(out) < n; i++ {
		out = append(out, fmt.Sprintf(asks[i%len(asks)], subjects[(i/len(asks))%len(subjects)])+strings.Repeat(" Please.", i/100))
	}
	return out
}

type stats struct {
	runs, failed         int
	chunks, chunksFailed int
	maxExp, minExp       int
	maxMean, minMean     float64
	maxMedian, minMedian float64
	time                 time.Duration
}

func newStats() *stats {
	return &stats{minExp: math.MaxInt, minMean: math.Inf(1), minMedian: math.Inf(1)}
}

// add records one verification, keeping the range of every chunk statistic:
// the maximum bounds honest noise, the minimum bounds what attacks leave.
func (s *stats) add(rep commit.Report, d time.Duration) {
	s.runs++
	s.time += d
	if !rep.OK {
		s.failed++
	}
	for _, c := range rep.Chunks {
		s.chunks++
		if !c.OK {
			s.chunksFailed++
		}
		s.maxExp, s.minExp = max(s.maxExp, c.ExpMismatch), min(s.minExp, c.ExpMismatch)
		s.maxMean, s.minMean = math.Max(s.maxMean, c.MeanMantissa), math.Min(s.minMean, c.MeanMantissa)
		s.maxMedian, s.minMedian = math.Max(s.maxMedian, c.MedianMantissa), math.Min(s.minMedian, c.MedianMantissa)
	}
}

func openModel(t testing.TB, dir string, o modelgen.GenOptions, eo llm.Options) *llm.Engine {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		if err := modelgen.GenerateModel(dir, o); err != nil {
			t.Fatal(err)
		}
	}
	e, err := llm.Open(dir, eo)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestDetectionExperiment commits to generations of 200 prompts and checks
// them with honest and dishonest recomputations. Run with -v for the table;
// TENZRO_DETECTION=devnet runs it on the devnet model.
func TestDetectionExperiment(t *testing.T) {
	base, n, maxTokens := experimentOptions()
	dir := t.TempDir()
	q8, seed2 := base, base
	q8.Quant, seed2.Seed = gguf.TypeQ8_0, base.Seed+1
	prover := openModel(t, dir+"/f32", base, llm.Options{Threads: 2})
	proverQ8 := openModel(t, dir+"/q8", q8, llm.Options{Threads: 2})
	honestOpts := []llm.Options{{Threads: 1, PrefillChunk: 1}, {Threads: 3, PrefillChunk: 7}, {Threads: 2, PrefillChunk: 64}}
	var honest []*llm.Engine
	for _, o := range honestOpts {
		honest = append(honest, openModel(t, dir+"/f32", base, o))
	}
	other := openModel(t, dir+"/seed2", seed2, llm.Options{})
	vocab := prover.Info().VocabSize
	ctx := context.Background()
	rows := map[string]*stats{}
	row := func(name string) *stats {
		if rows[name] == nil {
			rows[name] = newStats()
		}
		return rows[name]
	}
	verify := func(name string, e *llm.Engine, prompt, output []int, proofs []commit.Proof) {
		t0 := time.Now()
		rep, err := committest.VerifyWithEngine(ctx, e, prompt, output, proofs, commit.DefaultTolerance)
		if err != nil {
			t.Fatal(err)
		}
		row(name).add(rep, time.Since(t0))
	}
	ps := prompts(n)
	var genTime time.Duration
	var tokens, proofBytes, fullChunks int
	for i, p := range ps {
		req := inference.GenerateRequest{
			Messages: []inference.Message{{Role: "user", Content: p}},
			Sampling: inference.Sampling{Temperature: []float64{0, 0.7, 1}[i%3], TopP: 0.95, Seed: uint64(i), MaxTokens: maxTokens},
			LogProbs: commit.TopK,
		}
		gen := func(e *llm.Engine) (inference.Result, []commit.Proof) {
			var steps [][]inference.LogProb
			res, err := e.Generate(ctx, req, func(tok inference.Token) error {
				steps = append(steps, tok.TopK)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			proofs, err := commit.Build(steps, vocab)
			if err != nil {
				t.Fatal(err)
			}
			return res, proofs
		}
		t0 := time.Now()
		res, proofs := gen(prover)
		genTime += time.Since(t0)
		if len(res.Tokens) == 0 {
			continue
		}
		tokens += len(res.Tokens)
		for _, pr := range proofs {
			if pr.Steps() == commit.StepsPerChunk {
				b, _ := pr.MarshalBinary()
				proofBytes += len(b)
				fullChunks++
			}
		}
		for j, h := range honest {
			verify(fmt.Sprintf("honest: threads %d, prefill batch %d", honestOpts[j].Threads, honestOpts[j].PrefillChunk), h, res.Prompt, res.Tokens, proofs)
		}
		if i < 24 {
			t0 := time.Now()
			scored, err := prover.Model().ReferenceScore(res.Prompt, res.Tokens, commit.TopK)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := commit.Verify(proofs, scored, vocab, commit.DefaultTolerance)
			if err != nil {
				t.Fatal(err)
			}
			row("honest: float64 reference (24 prompts)").add(rep, time.Since(t0))
		}
		verify("attack: other weights (seed+1)", other, res.Prompt, res.Tokens, proofs)
		changed, _ := prover.EncodePrompt(inference.GenerateRequest{Messages: []inference.Message{{Role: "user", Content: ps[(i+1)%len(ps)]}}})
		verify("attack: changed prompt", prover, changed, res.Tokens, proofs)
		qres, qproofs := gen(proverQ8)
		if len(qres.Tokens) > 0 {
			verify("attack: Q8_0 served, F32 committed", prover, qres.Prompt, qres.Tokens, qproofs)
		}
	}
	names := []string{
		"honest: threads 1, prefill batch 1", "honest: threads 3, prefill batch 7", "honest: threads 2, prefill batch 64",
		"honest: float64 reference (24 prompts)",
		"attack: other weights (seed+1)", "attack: Q8_0 served, F32 committed", "attack: changed prompt",
	}
	var tb strings.Builder
	fmt.Fprintf(&tb, "model %d layers dim %d vocab %d, %d prompts, %d output tokens, tolerance %+v\n", base.Layers, base.Dim, vocab, n, tokens, commit.DefaultTolerance)
	fmt.Fprintf(&tb, "%-40s %6s %8s %14s %16s %18s %18s\n", "scenario", "runs", "flagged", "chunks flagged", "chunk exp mism.", "chunk mean mant.", "chunk median mant.")
	for _, name := range names {
		s := row(name)
		fmt.Fprintf(&tb, "%-40s %6d %7.1f%% %8d/%-5d %7d..%-8d %8.2f..%-8.2f %8.2f..%-8.2f\n", name, s.runs, 100*float64(s.failed)/float64(max(s.runs, 1)),
			s.chunksFailed, s.chunks, s.minExp, s.maxExp, s.minMean, s.maxMean, s.minMedian, s.maxMedian)
	}
	h := row("honest: threads 2, prefill batch 64")
	fmt.Fprintf(&tb, "proof: %.1f bytes per 32 tokens; generation %.1f ms/prompt, prefill verification %.1f ms/prompt (ratio %.2f)\n",
		float64(proofBytes)/float64(max(fullChunks, 1)), ms(genTime)/float64(n), ms(h.time)/float64(h.runs), float64(h.time)/float64(genTime))
	t.Log("\n" + tb.String())
	if os.Getenv("TENZRO_DETECTION") != "" {
		fmt.Print(tb.String())
	}
	for _, name := range names {
		s := row(name)
		if s.runs == 0 {
			t.Fatalf("%s: no runs", name)
		}
		if strings.HasPrefix(name, "honest") && s.failed != 0 {
			t.Errorf("%s: %d of %d honest recomputations flagged", name, s.failed, s.runs)
		}
		if strings.HasPrefix(name, "attack") && s.failed != s.runs {
			t.Errorf("%s: only %d of %d detected", name, s.failed, s.runs)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
