package llm_test

import (
	"maps"
	"path/filepath"
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
		"phi3": with(func(o *modelgen.GenOptions) { o.Arch = "phi3" }),
		"qwen3moe": with(func(o *modelgen.GenOptions) {
			o.Arch, o.HeadDim, o.MoE, o.Experts, o.ExpertsUsed = "qwen3moe", 32, true, 4, 2
		}),
		"gemma3-global": with(func(o *modelgen.GenOptions) { o.Arch, o.SlidingWindow = "gemma3", -1 }),
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
	if c := cfg("gemma3-global"); c.SWAPattern != 0 || c.Sliding(0) || c.FinalSoftcap != 30 || c.AttnSoftcap != 0 {
		t.Fatalf("gemma3 without a window: config %+v", c)
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
	if c := cfg("qwen3moe"); c.Experts != 4 || c.ExpertsUsed != 2 || c.FFN != 128 || !c.QKNorm {
		t.Fatalf("qwen3moe config %+v", c)
	}
	if c := cfg("phi3"); !c.RopeNeox || !c.FusedGateUp || c.QKVBias {
		t.Fatalf("phi3 config %+v", c)
	}
}

// TestPhi3FusedSplit: the matrices cut from Phi-3's fused tensors are the
// file's rows in llama.cpp's order: Q, K, V in attn_qkv; the gate, then
// the up projection, in ffn_up.
func TestPhi3FusedSplit(t *testing.T) {
	o := archOptions()["phi3"]
	m := open(t, o, llm.Options{}).Model()
	f, err := gguf.Open(filepath.Join(model(t, o), "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, l := m.Cfg, m.Layers[1]
	fileRow := func(name string, r int) []float32 {
		ti, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		raw, err := f.ReadTensor(ti, nil)
		if err != nil {
			t.Fatal(err)
		}
		row := make([]float32, c.Dim)
		rb := len(raw) / int(ti.Shape[1])
		if err := gguf.DecodeRow(row, ti.Type, raw[r*rb:(r+1)*rb]); err != nil {
			t.Fatal(err)
		}
		return row
	}
	buf := make([]float32, c.Dim)
	for _, tc := range []struct {
		name   string
		fused  string
		offset int
		m      *llm.Matrix
	}{
		{"q", "blk.1.attn_qkv.weight", 0, l.Q},
		{"k", "blk.1.attn_qkv.weight", c.QDim(), l.K},
		{"v", "blk.1.attn_qkv.weight", c.QDim() + c.KVDim(), l.V},
		{"gate", "blk.1.ffn_up.weight", 0, l.FFN.Gate},
		{"up", "blk.1.ffn_up.weight", c.FFN, l.FFN.Up},
	} {
		for _, r := range []int{0, tc.m.Rows - 1} {
			if !slices.Equal(tc.m.Row(r, buf), fileRow(tc.fused, tc.offset+r)) {
				t.Fatalf("%s row %d is not row %d of %s", tc.name, r, tc.offset+r, tc.fused)
			}
		}
	}
}

// TestDownloadedWeightTypes: BF16, Q4_K and Q6_K weights (decoded to
// float32 at load) match the reference, agree across kernel sets, and name
// the model's quantisation.
func TestDownloadedWeightTypes(t *testing.T) {
	for _, q := range []gguf.Type{gguf.TypeBF16, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		o := withQuant(tinyOptions(), q)
		o.Arch, o.Dim, o.FFN, o.HeadDim = "qwen3", 256, 256, 64
		matchesReference(t, q.String(), o)
		sameAcrossKernels(t, llm.KernelSets(), q.String(), o)
		if got := open(t, o, llm.Options{}).Model().Quant; got != q.String() {
			t.Fatalf("%v model reports quantisation %s", q, got)
		}
	}
}
