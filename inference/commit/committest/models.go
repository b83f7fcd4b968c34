package committest

import (
	"os"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// BenchModel is one model a cost benchmark runs on.
type BenchModel struct {
	Name string
	Opts modelgen.GenOptions
}

// BenchModels are the models a cost benchmark runs on, named by the
// environment variable env (space-separated; default "devnet"), in the
// order given: "devnet" is the devnet model, "moe" the devnet MoE model,
// "100m" the ~100M-weight F32 shape of scripts/bench-engine (dim 768, 12
// layers, 4 kv-heads, ffn 2048, vocab 16000). The 100M model is a 400 MB
// file and takes minutes, so only the bench scripts ask for it. Any other
// name fails the benchmark.
func BenchModels(tb testing.TB, env string) []BenchModel {
	tb.Helper()
	names := strings.Fields(os.Getenv(env))
	if len(names) == 0 {
		names = []string{"devnet"}
	}
	var out []BenchModel
	for _, n := range names {
		o := modelgen.DevnetOptions()
		switch n {
		case "devnet":
		case "moe":
			o.MoE = true
		case "100m":
			o.Name = "tenzro-100m"
			o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab = 12, 768, 12, 4, 2048, 16000
		default:
			tb.Fatalf("%s: unknown model %q (want devnet, moe or 100m)", env, n)
		}
		out = append(out, BenchModel{Name: n, Opts: o})
	}
	return out
}
