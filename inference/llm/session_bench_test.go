package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
)

// sessionHistory is a conversation of about want prompt tokens on e, and
// the prefix a successor holds for it (the history as the next turn's
// prompt shares it).
func sessionHistory(b *testing.B, e *llm.Engine, want int) (next []inference.Message, state []int) {
	text := "The harbour master kept a log of every boat that came in, the weather, the catch and the price it fetched at the market. "
	var hist []inference.Message
	for {
		hist = append(hist, inference.Message{Role: "user", Content: strings.Repeat(text, 3)},
			inference.Message{Role: "assistant", Content: strings.Repeat(text, 2)})
		p, err := e.EncodePrompt(inference.GenerateRequest{Messages: hist})
		if err != nil {
			b.Fatal(err)
		}
		if len(p) >= want {
			break
		}
	}
	next = append(hist, inference.Message{Role: "user", Content: "What did the log say about the last boat?"})
	a, _ := e.EncodePrompt(inference.GenerateRequest{Messages: hist})
	p, _ := e.EncodePrompt(inference.GenerateRequest{Messages: next})
	return next, a[:llm.CommonPrefix(a, p)]
}

// BenchmarkSessionTTFT is the time to the first token of a turn after a
// ~1,000-token history: on an engine without a cache (cold), on the
// primary that served the history (warm: its cache holds it), and on a
// successor that pre-filled the sealed state (failover: a second engine
// that only ever saw the token list). Run with TENZRO_BENCH_100M=1 for the
// 100M shape (see scripts/bench-engine).
func BenchmarkSessionTTFT(b *testing.B) {
	for name, o := range benchModels(b) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			cold := open(b, o, llm.Options{CacheBytes: -1})
			next, state := sessionHistory(b, cold, 1000)
			sp := inference.Sampling{MaxTokens: 1, Seed: 1}
			run := func(b *testing.B, e *llm.Engine, key string) {
				var cached int
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if key != "" {
						// Back to the history alone: the last run left its
						// own turn in the cache (truncating costs nothing).
						b.StopTimer()
						if err := e.Prefill(ctx, key, state); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					res, err := e.Generate(ctx, inference.GenerateRequest{Messages: next, Sampling: sp, CacheKey: key}, func(inference.Token) error { return nil })
					if err != nil {
						b.Fatal(err)
					}
					cached = res.CachedTokens
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/ttft")
				b.ReportMetric(float64(cached), "cached")
				b.ReportMetric(float64(len(state)), "history")
			}
			b.Run("cold", func(b *testing.B) { run(b, cold, "") })
			b.Run("warm-primary", func(b *testing.B) {
				e := open(b, o, llm.Options{})
				// The primary served the history: its turn left the state.
				if _, err := e.Generate(ctx, inference.GenerateRequest{PromptTokens: state, Sampling: sp, CacheKey: "s"}, func(inference.Token) error { return nil }); err != nil {
					b.Fatal(err)
				}
				run(b, e, "s")
			})
			b.Run("failover", func(b *testing.B) {
				e := open(b, o, llm.Options{})
				if err := e.Prefill(ctx, "s", state); err != nil {
					b.Fatal(err)
				}
				run(b, e, "s")
			})
		})
	}
}
