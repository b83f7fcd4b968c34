package modelgen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

func gen(t testing.TB, o modelgen.GenOptions) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := modelgen.GenerateModel(dir, o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, b
}

func TestDevnetModel(t *testing.T) {
	o := modelgen.DevnetOptions()
	dir, b := gen(t, o)
	if len(b) < 1<<20 || len(b) > 12<<20 {
		t.Fatalf("devnet model is %d bytes, want a few MB", len(b))
	}
	_, again := gen(t, o)
	if !bytes.Equal(b, again) {
		t.Fatal("same options gave different files")
	}
	o.Seed++
	other, _ := gen(t, o)
	_, r1, _ := catalog.Build(dir)
	_, r2, _ := catalog.Build(other)
	if r1 == r2 {
		t.Fatal("another seed gave the same model ID")
	}
	f, err := gguf.Open(filepath.Join(dir, "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for key, want := range map[string]string{"general.architecture": "llama", "tokenizer.ggml.model": "gpt2", "general.name": "tenzro-devnet"} {
		if got, _, _ := f.String(key); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if tmpl, _, _ := f.String("tokenizer.chat_template"); !bytes.Contains([]byte(tmpl), []byte("<|im_start|>")) {
		t.Errorf("chat template %q is not ChatML", tmpl)
	}
	toks, _, _ := f.Strings("tokenizer.ggml.tokens")
	merges, _, _ := f.Strings("tokenizer.ggml.merges")
	if len(toks) != o.Vocab || len(merges) < 300 {
		t.Fatalf("%d tokens, %d merges", len(toks), len(merges))
	}
	if len(f.Tensors) != 2+9*o.Layers+1 {
		t.Fatalf("%d tensors", len(f.Tensors))
	}
}

func TestQuantAndMoEVariants(t *testing.T) {
	o := modelgen.DevnetOptions()
	_, f32 := gen(t, o)
	o.Quant = gguf.TypeQ8_0
	_, q8 := gen(t, o)
	if r := float64(len(f32)) / float64(len(q8)); r < 3 || r > 4.2 {
		t.Fatalf("F32/Q8_0 size ratio %.2f", r)
	}
	o.Quant, o.MoE, o.Tokenizer = gguf.TypeF16, true, "llama"
	dir, _ := gen(t, o)
	f, err := gguf.Open(filepath.Join(dir, "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ti, ok := f.Tensor("blk.0.ffn_up_exps.weight")
	if !ok || len(ti.Shape) != 3 || ti.Shape[2] != uint64(o.Experts) || ti.Type != gguf.TypeF16 {
		t.Fatalf("expert tensor %+v %v", ti, ok)
	}
	if n, _, _ := f.Uint("llama.expert_used_count"); n != uint64(o.ExpertsUsed) {
		t.Fatalf("expert_used_count %d", n)
	}
	if sc, _, _ := f.Float32s("tokenizer.ggml.scores"); len(sc) != o.Vocab {
		t.Fatalf("%d scores", len(sc))
	}
}

func TestBadOptions(t *testing.T) {
	for name, mut := range map[string]func(*modelgen.GenOptions){
		"dim":       func(o *modelgen.GenOptions) { o.Dim = 100 },
		"heads":     func(o *modelgen.GenOptions) { o.Heads = 5 },
		"kv heads":  func(o *modelgen.GenOptions) { o.KVHeads = 4 },
		"vocab":     func(o *modelgen.GenOptions) { o.Vocab = 10 },
		"quant":     func(o *modelgen.GenOptions) { o.Quant = 2 },
		"moe":       func(o *modelgen.GenOptions) { o.MoE, o.ExpertsUsed = true, 9 },
		"tok":       func(o *modelgen.GenOptions) { o.Tokenizer = "wordpiece" },
		"layers":    func(o *modelgen.GenOptions) { o.Layers = 0 },
		"arch":      func(o *modelgen.GenOptions) { o.Arch = "mamba" },
		"arch moe":  func(o *modelgen.GenOptions) { o.Arch, o.MoE = "qwen3", true },
		"dense moe": func(o *modelgen.GenOptions) { o.Arch = "qwen3moe" },
		"head dim":  func(o *modelgen.GenOptions) { o.HeadDim = 7 },
		"q width":   func(o *modelgen.GenOptions) { o.Heads, o.KVHeads, o.HeadDim = 3, 1, 10 },
		"rope":      func(o *modelgen.GenOptions) { o.RopeScaling = "yarn" },
		"llama3":    func(o *modelgen.GenOptions) { o.Arch, o.RopeScaling = "gemma3", "llama3" },
		"factor":    func(o *modelgen.GenOptions) { o.RopeScaling, o.RopeFactor = "linear", 0 },
		"window":    func(o *modelgen.GenOptions) { o.Arch, o.SlidingWindow = "gemma2", -1 },
	} {
		o := modelgen.DevnetOptions()
		mut(&o)
		if err := modelgen.GenerateModel(t.TempDir(), o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func BenchmarkGenerateDevnet(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if err := modelgen.GenerateModel(dir, modelgen.DevnetOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
