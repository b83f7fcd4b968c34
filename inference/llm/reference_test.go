package llm_test

import (
	"context"
	"math"
	"testing"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

func TestForwardMatchesReference(t *testing.T) {
	moe := tinyOptions()
	moe.MoE = true
	for name, o := range map[string]modelgen.GenOptions{"dense": tinyOptions(), "moe": moe, "q8_0": withQuant(tinyOptions(), gguf.TypeQ8_0), "f16": withQuant(tinyOptions(), gguf.TypeF16)} {
		matchesReference(t, name, o)
	}
}

// matchesReference checks the engine's log-probs over a prompt against the
// float64 reference's.
func matchesReference(t *testing.T, name string, o modelgen.GenOptions) {
	t.Helper()
	e := open(t, o, llm.Options{Threads: 2, PrefillChunk: 5})
	m := e.Model()
	tokens, _ := e.Tokenize("The old man told the story of his life, and the children listened.")
	want, err := m.ReferenceForward(tokens)
	if err != nil {
		t.Fatal(err)
	}
	seq := m.NewSequence(2, 64, nil)
	got, err := seq.Forward(context.Background(), tokens, 0)
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for p := range tokens {
		w := llm.LogSoftmax64(want[p])
		g := make([]float64, len(got[p]))
		for i, v := range got[p] {
			g[i] = float64(v)
		}
		g = llm.LogSoftmax64(g)
		for i := range w {
			worst = math.Max(worst, math.Abs(w[i]-g[i]))
		}
	}
	if worst > 1e-4 {
		t.Fatalf("%s: log-probs differ from the float64 reference by up to %v", name, worst)
	}
	t.Logf("%s: max |Δ log-prob| vs float64 reference over %d positions: %.2g", name, len(tokens), worst)
}
