package llm

import (
	"fmt"

	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Config is the shape of a llama-family model, read from GGUF metadata.
type Config struct {
	Name        string
	Arch        string
	Dim         int // embedding length
	Layers      int
	Heads       int
	KVHeads     int
	HeadDim     int
	FFN         int // feed-forward (or per-expert) hidden size
	Vocab       int
	Context     int // context length the model was built for
	RopeBase    float64
	RopeDim     int
	Eps         float32
	Experts     int // 0 for a dense model
	ExpertsUsed int

	// Architecture traits (arch.go).
	RopeNeox     bool    // rotate pairs (i, i+RopeDim/2) rather than adjacent ones
	RopeScale    float64 // linear rope scaling: angles multiplied by it (1/rope.scaling.factor)
	RopeBaseSWA  float64 // rope base of sliding-window layers
	RopeScaleSWA float64
	QKVBias      bool
	QKNorm       bool
	Gemma        bool    // embedding scaling, post norms, GeGLU
	FusedGateUp  bool    // ffn_up stacks gate and up rows (phi3)
	AttnScale    float64 // attention scores are q·k times this
	AttnSoftcap  float64 // scores become c*tanh(s/c) when nonzero
	FinalSoftcap float64 // as AttnSoftcap, for the output logits
	// SlidingWindow: in layers where Sliding(l), position p attends to
	// positions p-SlidingWindow+1..p only.
	SlidingWindow int
	SWAPattern    int
}

// Limits on what a file may declare; they keep a hostile file from asking
// for absurd allocations before any tensor is checked.
const (
	maxDim     = 1 << 15
	maxLayers  = 512
	maxFFN     = 1 << 17
	maxExperts = 256
	maxContext = 1 << 20
)

func configFrom(f *gguf.File) (Config, error) {
	var c Config
	var err error
	arch, ok, err := f.String("general.architecture")
	if err != nil || !ok {
		return c, fmt.Errorf("general.architecture missing or invalid: %w", err)
	}
	traits, ok := archs[arch]
	if !ok {
		return c, fmt.Errorf("unsupported architecture %q (want one of %v)", arch, Architectures())
	}
	c.Arch = arch
	c.Name, _, _ = f.String("general.name")
	u := func(key string, def uint64, lo, hi int) (int, error) {
		v, ok, err := f.Uint(arch + "." + key)
		if err != nil {
			return 0, err
		}
		if !ok {
			if def == 0 {
				return 0, fmt.Errorf("%s.%s missing", arch, key)
			}
			v = def
		}
		if v < uint64(lo) || v > uint64(hi) {
			return 0, fmt.Errorf("%s.%s = %d outside %d..%d", arch, key, v, lo, hi)
		}
		return int(v), nil
	}
	if c.Dim, err = u("embedding_length", 0, 1, maxDim); err != nil {
		return c, err
	}
	if c.Layers, err = u("block_count", 0, 1, maxLayers); err != nil {
		return c, err
	}
	if c.Heads, err = u("attention.head_count", 0, 1, c.Dim); err != nil {
		return c, err
	}
	if c.KVHeads, err = u("attention.head_count_kv", uint64(c.Heads), 1, c.Heads); err != nil {
		return c, err
	}
	if c.FFN, err = u("feed_forward_length", 0, 1, maxFFN); err != nil && !traits.moe {
		return c, err
	}
	if c.Context, err = u("context_length", 2048, 1, maxContext); err != nil {
		return c, err
	}
	if c.Experts, err = u("expert_count", 1, 0, maxExperts); err != nil {
		return c, err
	}
	if c.ExpertsUsed, err = u("expert_used_count", 1, 0, max(c.Experts, 1)); err != nil {
		return c, err
	}
	if traits.moe {
		// The dense feed_forward_length of a Qwen MoE is unused; each
		// expert's width has its own key.
		if c.FFN, err = u("expert_feed_forward_length", 0, 1, maxFFN); err != nil {
			return c, err
		}
		if c.Experts <= 1 {
			return c, fmt.Errorf("%s needs expert_count > 1, got %d", arch, c.Experts)
		}
	}
	if c.Experts <= 1 {
		c.Experts, c.ExpertsUsed = 0, 0
	} else if c.ExpertsUsed < 1 {
		return c, fmt.Errorf("%d experts but expert_used_count %d", c.Experts, c.ExpertsUsed)
	}
	if c.Heads%c.KVHeads != 0 {
		return c, fmt.Errorf("%d heads and %d kv heads do not divide evenly", c.Heads, c.KVHeads)
	}
	// Heads may be wider or narrower than Dim/Heads (Qwen3, Gemma): the
	// file then says so in attention.key_length, as llama.cpp reads it.
	if kl, ok, err := f.Uint(arch + ".attention.key_length"); err != nil {
		return c, err
	} else if ok {
		if kl < 2 || kl > maxDim || kl*uint64(c.Heads) > 4*maxDim {
			return c, fmt.Errorf("attention.key_length %d out of range", kl)
		}
		c.HeadDim = int(kl)
	} else if c.Dim%c.Heads != 0 {
		return c, fmt.Errorf("embedding %d does not divide into %d heads", c.Dim, c.Heads)
	} else {
		c.HeadDim = c.Dim / c.Heads
	}
	if vl, ok, err := f.Uint(arch + ".attention.value_length"); err != nil {
		return c, err
	} else if ok && vl != uint64(c.HeadDim) {
		return c, fmt.Errorf("attention.value_length %d differs from key_length %d", vl, c.HeadDim)
	}
	if c.RopeDim, err = u("rope.dimension_count", uint64(c.HeadDim), 2, c.HeadDim); err != nil {
		return c, err
	}
	if c.RopeDim%2 != 0 {
		return c, fmt.Errorf("rope.dimension_count %d is odd", c.RopeDim)
	}
	c.RopeBase = 10000
	if b, ok, err := f.Float(arch + ".rope.freq_base"); err != nil {
		return c, err
	} else if ok {
		if b <= 1 || b > 1e12 {
			return c, fmt.Errorf("rope.freq_base %v out of range", b)
		}
		c.RopeBase = b
	}
	// As llama.cpp reads it: a rope.scaling.factor (or the older
	// rope.scale_linear) scales every angle by its inverse unless the type
	// names a scheme the engine lacks. Llama 3.1's scaling has no type: its
	// converter writes per-frequency factors as rope_freqs.weight (model.go).
	c.RopeScale = 1
	if st, ok, err := f.String(arch + ".rope.scaling.type"); err != nil {
		return c, err
	} else if ok && st != "linear" && st != "none" {
		return c, fmt.Errorf("rope scaling %q is not supported", st)
	}
	factor := 0.0
	if err := optFloat(f, arch+".rope.scale_linear", 0, 1e6, &factor); err != nil {
		return c, err
	}
	if err := optFloat(f, arch+".rope.scaling.factor", 0, 1e6, &factor); err != nil {
		return c, err
	}
	if factor != 0 {
		c.RopeScale = 1 / factor
	}
	c.Eps = 1e-5
	if e, ok, err := f.Float(arch + ".attention.layer_norm_rms_epsilon"); err != nil {
		return c, err
	} else if ok {
		if e <= 0 || e > 1 {
			return c, fmt.Errorf("layer_norm_rms_epsilon %v out of range", e)
		}
		c.Eps = float32(e)
	}
	if err := archConfig(f, &c, traits); err != nil {
		return c, err
	}
	return c, nil
}

// KVDim is the width of one position's keys (or values) in the cache.
func (c Config) KVDim() int { return c.KVHeads * c.HeadDim }
