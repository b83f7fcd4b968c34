package llm_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// TestGenerationSameAcrossKernels: every kernel set (assembly and pure Go)
// at every thread count gives the same tokens, log-probs and top-k, for
// every weight type, and scoring the answer by prefill reproduces them.
func TestGenerationSameAcrossKernels(t *testing.T) {
	sets := llm.KernelSets()
	if len(sets) < 2 {
		t.Logf("only the pure-Go kernels run here (%v)", sets)
	}
	for _, q := range []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeQ8_0} {
		o := withQuant(tinyOptions(), q)
		o.Dim, o.Heads, o.KVHeads, o.FFN = 96, 3, 1, 160 // head size 32, rows not multiples of 4
		sameAcrossKernels(t, sets, q.String(), o)
	}
}

// sameAcrossKernels generates with o on every kernel set at 1 and 3
// threads and checks the runs, and scoring each answer, agree bit for bit.
func sameAcrossKernels(t *testing.T, sets []string, label string, o modelgen.GenOptions) {
	t.Helper()
	req := inference.GenerateRequest{
		Messages: chat("Write a line about rivers."),
		Sampling: inference.Sampling{Temperature: 0.8, Seed: 7, MaxTokens: 16},
		LogProbs: 3,
	}
	var base run
	for i, name := range sets {
		restore := llm.UseKernels(name)
		for _, threads := range []int{1, 3} {
			e := open(t, o, llm.Options{Threads: threads, PrefillChunk: 5})
			got := generate(t, e, req)
			if i == 0 && threads == 1 {
				base = got
				if len(base.tokens) == 0 {
					t.Fatal("no tokens")
				}
				continue
			}
			if !reflect.DeepEqual(got.tokens, base.tokens) || !reflect.DeepEqual(got.res, base.res) {
				restore()
				t.Fatalf("%s kernels %s threads %d: generation differs from %s with 1 thread", label, name, threads, sets[0])
			}
			scored, err := e.Score(context.Background(), base.res.Prompt, base.res.Tokens, 3)
			if err != nil {
				t.Fatal(err)
			}
			for s, tok := range base.tokens {
				if !reflect.DeepEqual(scored[s], tok.TopK) {
					restore()
					t.Fatalf("%s kernels %s threads %d: step %d: score %v, generate %v", label, name, threads, s, scored[s], tok.TopK)
				}
			}
		}
		restore()
	}
}
