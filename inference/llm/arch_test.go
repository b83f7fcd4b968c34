package llm_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// archOptions are tiny models of each architecture beyond plain llama,
// shaped so that each trait shows on a short prompt: windows shorter than
// the prompt, soft-caps the scores reach, heads wider than dim/heads.
func archOptions() map[string]modelgen.GenOptions {
	with := func(f func(o *modelgen.GenOptions)) modelgen.GenOptions {
		o := tinyOptions()
		f(&o)
		return o
	}
	return map[string]modelgen.GenOptions{
		"qwen2": with(func(o *modelgen.GenOptions) { o.Arch = "qwen2" }),
		"qwen3": with(func(o *modelgen.GenOptions) { o.Arch, o.HeadDim = "qwen3", 32 }), // 4 heads x 32 = 128 > dim 64
		"llama3-rope": with(func(o *modelgen.GenOptions) {
			o.RopeScaling, o.Tokenizer = "llama3", "llama"
		}),
		"llama-linear-rope": with(func(o *modelgen.GenOptions) { o.RopeScaling, o.RopeFactor = "linear", 4 }),
		"gemma2": with(func(o *modelgen.GenOptions) {
			o.Arch, o.SlidingWindow, o.AttnSoftcap, o.FinalSoftcap, o.Tokenizer = "gemma2", 6, 2, 4, "llama"
		}),
		// Six layers: five sliding, the sixth global with linear rope scaling.
		"gemma3": with(func(o *modelgen.GenOptions) {
			o.Arch, o.Layers, o.SlidingWindow, o.HeadDim, o.RopeScaling, o.RopeFactor = "gemma3", 6, 6, 24, "linear", 8
		}),
	}
}

func TestArchForwardMatchesReference(t *testing.T) {
	all := archOptions()
	for _, name := range slices.Sorted(maps.Keys(all)) {
		matchesReference(t, name, all[name])
	}
	matchesReference(t, "qwen3 q8_0", withQuant(all["qwen3"], gguf.TypeQ8_0))
	matchesReference(t, "gemma2 f16", withQuant(all["gemma2"], gguf.TypeF16))
}

func TestArchSameAcrossKernels(t *testing.T) {
	sets := llm.KernelSets()
	all := archOptions()
	for _, name := range slices.Sorted(maps.Keys(all)) {
		t.Run(name, func(t *testing.T) { sameAcrossKernels(t, sets, name, all[name]) })
	}
}

// TestArchConfig: each architecture loads with the traits llama.cpp gives
// it, read from the keys llama.cpp reads.
func TestArchConfig(t *testing.T) {
	all := archOptions()
	cfg := func(name string) llm.Config { return open(t, all[name], llm.Options{}).Model().Cfg }
	q3 := cfg("qwen3")
	if q3.Arch != "qwen3" || !q3.RopeNeox || !q3.QKNorm || q3.QKVBias || q3.HeadDim != 32 || q3.QDim() != 128 {
		t.Fatalf("qwen3 config %+v", q3)
	}
	if q2 := cfg("qwen2"); !q2.RopeNeox || !q2.QKVBias || q2.QKNorm {
		t.Fatalf("qwen2 config %+v", q2)
	}
	g2 := cfg("gemma2")
	if !g2.Gemma || g2.SlidingWindow != 6 || g2.AttnSoftcap != 2 || g2.FinalSoftcap != 4 || !g2.Sliding(0) || g2.Sliding(1) {
		t.Fatalf("gemma2 config %+v", g2)
	}
	g3 := cfg("gemma3")
	if g3.FinalSoftcap != 0 || g3.AttnSoftcap != 0 || !g3.QKNorm || g3.RopeScale != 1.0/8 || g3.RopeScaleSWA != 1 || g3.RopeBaseSWA != 10000 {
		t.Fatalf("gemma3 config %+v", g3)
	}
	for l := range g3.Layers {
		if g3.Sliding(l) != (l != 5) {
			t.Fatalf("gemma3 layer %d sliding = %v", l, g3.Sliding(l))
		}
	}
	m := open(t, all["llama3-rope"], llm.Options{}).Model()
	if len(m.RopeFactors) != m.Cfg.RopeDim/2 || m.RopeFactors[0] != 1 || m.RopeFactors[len(m.RopeFactors)-1] != 8 {
		t.Fatalf("llama3 rope factors %v", m.RopeFactors)
	}
	if c := cfg("llama-linear-rope"); c.RopeScale != 0.25 || c.RopeNeox {
		t.Fatalf("linear rope config %+v", c)
	}
}
