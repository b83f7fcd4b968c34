package llm_test

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// benchModels are the benchmark subjects: the devnet model, and with
// TENZRO_BENCH_100M=1 a ~100M-weight model (dim 768, 12 layers, vocab 16000;
// writing it takes a few seconds and 400 MB of temporary disk in F32).
func benchModels(b *testing.B) map[string]modelgen.GenOptions {
	out := map[string]modelgen.GenOptions{}
	for _, q := range []gguf.Type{gguf.TypeF32, gguf.TypeQ8_0} {
		o := modelgen.DevnetOptions()
		o.Quant = q
		out["devnet-"+q.String()] = o
		if os.Getenv("TENZRO_BENCH_100M") != "" {
			big := o
			big.Layers, big.Dim, big.Heads, big.KVHeads, big.FFN, big.Vocab = 12, 768, 12, 4, 2048, 16000
			out["100M-"+q.String()] = big
		}
	}
	return out
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

func BenchmarkDecode(b *testing.B) {
	for name, o := range benchModels(b) {
		b.Run(name, func(b *testing.B) {
			e := open(b, o, llm.Options{})
			m := e.Model()
			prompt, _ := e.Tokenize("Once upon a time there was a small town by the sea.")
			ctx := context.Background()
			var seq *llm.Sequence
			var tok int
			start := func() {
				seq = m.NewSequence(runtime.NumCPU(), 256, nil)
				l, err := seq.Forward(ctx, prompt, len(prompt)-1)
				if err != nil {
					b.Fatal(err)
				}
				tok = argmax(l[0])
			}
			start()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if seq.Len() >= 256 {
					b.StopTimer()
					start()
					b.StartTimer()
				}
				l, err := seq.Forward(ctx, []int{tok}, 0)
				if err != nil {
					b.Fatal(err)
				}
				tok = argmax(l[0])
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(float64(m.Params)/1e6, "Mparams")
		})
	}
}

func BenchmarkPrefill(b *testing.B) {
	for name, o := range benchModels(b) {
		b.Run(name, func(b *testing.B) {
			e := open(b, o, llm.Options{})
			m := e.Model()
			tokens := make([]int, 128)
			for i := range tokens {
				tokens[i] = (i*7919 + 13) % m.Cfg.Vocab
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				seq := m.NewSequence(runtime.NumCPU(), len(tokens), nil)
				for c := 0; c < len(tokens); c += 64 {
					if _, err := seq.Forward(ctx, tokens[c:c+64], 64); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N*len(tokens))/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkScoreVsGenerate times generating 96 tokens and scoring the same
// answer by prefill (optimistic verification), on the devnet model.
func BenchmarkScoreVsGenerate(b *testing.B) {
	e := open(b, modelgen.DevnetOptions(), llm.Options{Threads: runtime.NumCPU()})
	req := inference.GenerateRequest{
		Messages: []inference.Message{{Role: "user", Content: "Tell me a story about a lighthouse keeper."}},
		Sampling: inference.Sampling{Temperature: 0.7, TopP: 0.95, Seed: 1, MaxTokens: 96},
		LogProbs: 8,
	}
	gen := func(b *testing.B) inference.Result {
		res, err := e.Generate(context.Background(), req, func(inference.Token) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	res := gen(b)
	b.Run("generate", func(b *testing.B) {
		for b.Loop() {
			gen(b)
		}
	})
	b.Run("score", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.Score(context.Background(), res.Prompt, res.Tokens, 8); err != nil {
				b.Fatal(err)
			}
		}
	})
}
