package modelgen

import (
	"fmt"
	"math"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Arches are the architectures GenerateModel writes.
var Arches = []string{"llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3"}

func (o *GenOptions) arch() string {
	if o.Arch == "" {
		return "llama"
	}
	return o.Arch
}

func (o *GenOptions) gemma() bool { return o.Arch == "gemma2" || o.Arch == "gemma3" }

func (o *GenOptions) headDim() int {
	if o.HeadDim != 0 {
		return o.HeadDim
	}
	return o.Dim / o.Heads
}

func (o *GenOptions) checkArch() error {
	known := false
	for _, a := range Arches {
		known = known || a == o.arch()
	}
	switch {
	case !known:
		return fmt.Errorf("architecture %q is not one of %v", o.Arch, Arches)
	case o.MoE != (o.arch() == "qwen3moe") && o.arch() != "llama":
		return fmt.Errorf("%s is generated with --moe %v", o.Arch, o.arch() == "qwen3moe")
	case o.RopeScaling != "" && o.RopeScaling != "llama3" && o.RopeScaling != "linear":
		return fmt.Errorf("rope scaling %q is not llama3 or linear", o.RopeScaling)
	case o.RopeScaling == "llama3" && o.arch() != "llama":
		return fmt.Errorf("llama3 rope scaling is for llama, not %s", o.Arch)
	case o.RopeScaling == "linear" && !(o.RopeFactor >= 1 && o.RopeFactor <= 1024):
		return fmt.Errorf("linear rope scaling needs a factor in 1..1024, got %v", o.RopeFactor)
	case o.HeadDim*o.Heads%32 != 0:
		return fmt.Errorf("heads x head size %d must be a multiple of 32", o.HeadDim*o.Heads)
	case (o.Quant == gguf.TypeQ4_K || o.Quant == gguf.TypeQ6_K) && (o.Dim%gguf.KBlockSize != 0 || o.FFN%gguf.KBlockSize != 0 || o.headDim()*o.Heads%gguf.KBlockSize != 0):
		return fmt.Errorf("%v needs dim, ffn and heads x head size in multiples of %d", o.Quant, gguf.KBlockSize)
	case o.SlidingWindow < -1 || o.SlidingWindow == -1 && o.arch() != "gemma3" || o.AttnSoftcap < 0 || o.FinalSoftcap < 0:
		return fmt.Errorf("sliding window (-1 for none: gemma3 only) and soft-caps must not be negative")
	}
	if o.SlidingWindow == 0 {
		o.SlidingWindow = 512
	}
	if o.AttnSoftcap == 0 {
		o.AttnSoftcap = 50
	}
	if o.FinalSoftcap == 0 {
		o.FinalSoftcap = 30
	}
	return nil
}

// FileType is general.file_type for a model whose matrices are all of type
// q: llama.cpp's llama_ftype (ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q8_0 7,
// MOSTLY_Q4_K_S 14, MOSTLY_Q6_K 18, MOSTLY_BF16 32).
func FileType(q gguf.Type) uint32 {
	return map[gguf.Type]uint32{gguf.TypeF32: 0, gguf.TypeF16: 1, gguf.TypeQ8_0: 7, gguf.TypeQ4_K: 14, gguf.TypeQ6_K: 18, gguf.TypeBF16: 32}[q]
}

// writeArchMeta writes the keys llama.cpp reads for the architecture
// beyond those every one has.
func writeArchMeta(w *gguf.Writer, o *GenOptions) {
	arch := o.arch()
	if o.HeadDim != 0 {
		w.SetUint32(arch+".attention.key_length", uint32(o.HeadDim))
		w.SetUint32(arch+".attention.value_length", uint32(o.HeadDim))
	}
	if o.RopeScaling == "linear" {
		w.SetString(arch+".rope.scaling.type", "linear")
		w.SetFloat32(arch+".rope.scaling.factor", float32(o.RopeFactor))
	}
	if arch == "qwen3moe" {
		w.SetUint32(arch+".expert_feed_forward_length", uint32(o.FFN))
	}
	if o.gemma() && o.SlidingWindow > 0 {
		w.SetUint32(arch+".attention.sliding_window", uint32(o.SlidingWindow))
	}
	if arch == "gemma2" {
		w.SetFloat32(arch+".attn_logit_softcapping", float32(o.AttnSoftcap))
		w.SetFloat32(arch+".final_logit_softcapping", float32(o.FinalSoftcap))
	}
}

// addArchLayer adds the tensors of layer prefix p that only some
// architectures have, under llama.cpp's names. Gemma's norm weights are
// drawn around 1 because its converter stores them as 1+w.
func addArchLayer(add func(string, gguf.Type, []uint64, float64, float64), o *GenOptions, p string) {
	d := uint64(o.Dim)
	hd, qd, kv := uint64(o.headDim()), uint64(o.headDim()*o.Heads), uint64(o.headDim()*o.KVHeads)
	switch o.arch() {
	case "qwen2":
		add(p+"attn_q.bias", gguf.TypeF32, []uint64{qd}, 0, 0.2)
		add(p+"attn_k.bias", gguf.TypeF32, []uint64{kv}, 0, 0.2)
		add(p+"attn_v.bias", gguf.TypeF32, []uint64{kv}, 0, 0.2)
	case "qwen3", "qwen3moe", "gemma3":
		add(p+"attn_q_norm.weight", gguf.TypeF32, []uint64{hd}, 1, 0.05)
		add(p+"attn_k_norm.weight", gguf.TypeF32, []uint64{hd}, 1, 0.05)
	}
	if o.gemma() {
		add(p+"post_attention_norm.weight", gguf.TypeF32, []uint64{d}, 1, 0.05)
		add(p+"post_ffw_norm.weight", gguf.TypeF32, []uint64{d}, 1, 0.05)
	}
}

// llama3Factors writes Llama 3.1's rope frequency factors the way its
// converter derives them from rope_scaling: 1 for wavelengths under
// original/high, factor over original/low, a smooth blend between.
func llama3Factors(o *GenOptions) gguf.RowFunc {
	const factor, low, high, original = 8.0, 1.0, 4.0, 8192.0
	return func(_ int, dst []float32) {
		for i := range dst {
			freq := 1 / math.Pow(o.RopeBase, float64(2*i)/float64(o.headDim()))
			wavelen := 2 * math.Pi / freq
			switch {
			case wavelen < original/high:
				dst[i] = 1
			case wavelen > original/low:
				dst[i] = factor
			default:
				smooth := (original/wavelen - low) / (high - low)
				dst[i] = float32(1 / ((1-smooth)/factor + smooth))
			}
		}
	}
}
